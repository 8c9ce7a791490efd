package compat

import (
	"bytes"
	"encoding/json"
)

// jsonStrict decodes data into v, refusing unknown keys, so a misspelt key
// in a vector file fails instead of being ignored.
func jsonStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}
