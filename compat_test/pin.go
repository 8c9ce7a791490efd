package compat

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// ParseMessagePin reads vectors/messages.pin: "message number label type
// name [packed]" per line, or "message -" for a message without fields.
// Blank lines and lines starting with '#' are ignored. Messages come back in
// the order of their first line.
func ParseMessagePin(src string) ([]ProtoMessage, error) {
	var out []ProtoMessage
	index := map[string]int{}
	err := eachLine(src, func(n int, line string) error {
		f := strings.Fields(line)
		i, ok := index[f[0]]
		if !ok {
			i = len(out)
			index[f[0]] = i
			out = append(out, ProtoMessage{Name: f[0]})
		}
		if len(f) == 2 && f[1] == "-" {
			return nil
		}
		if len(f) != 5 && !(len(f) == 6 && f[5] == "packed") {
			return fmt.Errorf("line %d: want 'message number label type name [packed]'", n)
		}
		num, err := strconv.Atoi(f[1])
		if err != nil || num < 1 {
			return fmt.Errorf("line %d: bad field number %q", n, f[1])
		}
		switch f[2] {
		case "required", "optional", "repeated":
		default:
			return fmt.Errorf("line %d: bad label %q", n, f[2])
		}
		for _, have := range out[i].Fields {
			if have.Number == num || have.Name == f[4] {
				return fmt.Errorf("line %d: %s field %s (%d) listed twice", n, f[0], f[4], num)
			}
		}
		out[i].Fields = append(out[i].Fields, ProtoField{Number: num, Label: f[2], Type: f[3], Name: f[4], Packed: len(f) == 6})
		return nil
	})
	return out, err
}

// APIKeyPin is one row of vectors/api_keys.pin.
type APIKeyPin struct {
	Key               int16
	Name              string
	MinVersion        int16
	MaxVersion        int16
	Request, Response string
}

// ParseAPIKeyPin reads vectors/api_keys.pin.
func ParseAPIKeyPin(src string) ([]APIKeyPin, error) {
	var out []APIKeyPin
	err := eachLine(src, func(n int, line string) error {
		f := strings.Fields(line)
		if len(f) != 6 {
			return fmt.Errorf("line %d: want 'key name min max request response'", n)
		}
		var nums [3]int16
		for i, s := range []string{f[0], f[2], f[3]} {
			v, err := strconv.ParseInt(s, 10, 16)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			nums[i] = int16(v)
		}
		out = append(out, APIKeyPin{Key: nums[0], Name: f[1], MinVersion: nums[1], MaxVersion: nums[2], Request: f[4], Response: f[5]})
		return nil
	})
	return out, err
}

// APIKeyNamePin is one row of vectors/api_key_names.pin.
type APIKeyNamePin struct {
	Key  int16
	Name string
}

// ParseAPIKeyNamePin reads vectors/api_key_names.pin: "key name" per line.
func ParseAPIKeyNamePin(src string) ([]APIKeyNamePin, error) {
	var out []APIKeyNamePin
	err := eachLine(src, func(n int, line string) error {
		f := strings.Fields(line)
		if len(f) != 2 {
			return fmt.Errorf("line %d: want 'key name'", n)
		}
		key, err := strconv.ParseInt(f[0], 10, 16)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, APIKeyNamePin{Key: int16(key), Name: f[1]})
		return nil
	})
	return out, err
}

// ErrorCodePin is one row of vectors/error_codes.pin.
type ErrorCodePin struct {
	Code           int32
	Name           string
	Retriable      bool
	DefaultMessage string
}

// ParseErrorCodePin reads vectors/error_codes.pin: "code|NAME|retriable|message".
func ParseErrorCodePin(src string) ([]ErrorCodePin, error) {
	var out []ErrorCodePin
	err := eachLine(src, func(n int, line string) error {
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 {
			return fmt.Errorf("line %d: want 'code|NAME|retriable|message'", n)
		}
		code, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		retriable, err := strconv.ParseBool(f[2])
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, ErrorCodePin{Code: int32(code), Name: f[1], Retriable: retriable, DefaultMessage: f[3]})
		return nil
	})
	return out, err
}

// eachLine calls fn with every line that is not blank or a '#' comment.
// Trailing spaces are kept (a default message may end in one); a '\r'
// before the newline is not.
func eachLine(src string, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}

// ComparePin lists every difference between the messages of a parsed .proto
// (got) and the pin table (want): missing or extra messages and fields, and
// fields whose number, label, type or packed option differ. Fields are
// matched by name, so a changed number shows as a difference of that field.
func ComparePin(got, want []ProtoMessage) []string {
	var diffs []string
	gm := map[string]ProtoMessage{}
	for _, m := range got {
		gm[m.Name] = m
	}
	wm := map[string]bool{}
	for _, w := range want {
		wm[w.Name] = true
		g, ok := gm[w.Name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("message %s: in the spec, missing from the .proto", w.Name))
			continue
		}
		gf := map[string]ProtoField{}
		for _, f := range g.Fields {
			gf[f.Name] = f
		}
		wf := map[string]bool{}
		for _, f := range w.Fields {
			wf[f.Name] = true
			h, ok := gf[f.Name]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: in the spec (= %d), missing from the .proto", w.Name, f.Name, f.Number))
			case h != f:
				diffs = append(diffs, fmt.Sprintf("%s.%s: .proto has %s, spec has %s", w.Name, f.Name, describe(h), describe(f)))
			}
		}
		for _, f := range g.Fields {
			if !wf[f.Name] {
				diffs = append(diffs, fmt.Sprintf("%s.%s: in the .proto (= %d), not in the spec", g.Name, f.Name, f.Number))
			}
		}
	}
	for _, g := range got {
		if !wm[g.Name] {
			diffs = append(diffs, fmt.Sprintf("message %s: in the .proto, not in the spec", g.Name))
		}
	}
	return diffs
}

func describe(f ProtoField) string {
	s := fmt.Sprintf("%s %s %s = %d", f.Label, f.Type, f.Name, f.Number)
	if f.Packed {
		s += " [packed]"
	}
	return s
}
