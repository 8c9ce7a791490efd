package zktls

import "fmt"

// decodeGuarded runs a third-party store decoder and turns a panic in it
// into an error: a damaged file must be refused with a reason, not end the
// process (youmark/pkcs8, for one, panics on an IV of the wrong length).
func decodeGuarded[T any](decode func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("the decoder failed on the file's contents: %v", r)
		}
	}()
	return decode()
}
