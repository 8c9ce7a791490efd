package compat

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseProto: the .proto parser never panics, and whatever it accepts
// has positive, unique field numbers and names and a known label.
func FuzzParseProto(f *testing.F) {
	if src, err := os.ReadFile(protoPath); err == nil {
		f.Add(string(src))
	}
	f.Add("message A { repeated int64 x = 3 [packed = true]; }")
	f.Add("/* */ // \n option a = 'b';")
	f.Fuzz(func(t *testing.T, src string) {
		msgs, err := ParseProto(src)
		if err != nil {
			return
		}
		for _, m := range msgs {
			seen := map[int]bool{}
			for _, fl := range m.Fields {
				if fl.Number < 1 || seen[fl.Number] {
					t.Fatalf("%s: bad or duplicate number %d", m.Name, fl.Number)
				}
				seen[fl.Number] = true
				if fl.Label != "required" && fl.Label != "optional" && fl.Label != "repeated" {
					t.Fatalf("label %q", fl.Label)
				}
			}
		}
	})
}

// FuzzParsePins: the four pin-table parsers never panic; an accepted
// message pin never repeats a field number within a message.
func FuzzParsePins(f *testing.F) {
	for _, name := range []string{"messages.pin", "api_keys.pin", "api_key_names.pin", "error_codes.pin"} {
		if b, err := os.ReadFile(filepath.Join(vectorsDir, name)); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("A 1 required int32 x packed\nB -\n")
	f.Fuzz(func(t *testing.T, src string) {
		if msgs, err := ParseMessagePin(src); err == nil {
			for _, m := range msgs {
				seen := map[int]bool{}
				for _, fl := range m.Fields {
					if seen[fl.Number] {
						t.Fatalf("%s: duplicate number %d", m.Name, fl.Number)
					}
					seen[fl.Number] = true
				}
			}
		}
		ParseAPIKeyPin(src)
		ParseAPIKeyNamePin(src)
		ParseErrorCodePin(src)
	})
}

// FuzzParseFrame: the vector-file reader never panics, and an accepted
// vector's layout adds up to its bytes.
func FuzzParseFrame(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(vectorsDir, "frames", "*.json"))
	for _, p := range paths[:min(len(paths), 8)] {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := ParseFrame(data)
		if err != nil {
			return
		}
		raw, err := fr.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range fr.Layout {
			b, err := decodeHex(l.Hex)
			if err != nil {
				t.Fatal(err)
			}
			n += len(b)
		}
		if n != len(raw) {
			t.Fatalf("layout %d bytes, frame %d", n, len(raw))
		}
	})
}
