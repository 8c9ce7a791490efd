package compat

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Frame is one golden frame of vectors/frames/<name>.json.
type Frame struct {
	Name      string `json:"name"`
	Meaning   string `json:"meaning"`
	Source    string `json:"source"`
	Direction string `json:"direction"` // client_to_server or server_to_client
	// Kind is request, success, error, server_failure, or invalid (bytes
	// that are not a frame at all).
	Kind       string          `json:"frame"`
	APIKey     *int16          `json:"api_key"`
	APIVersion *int16          `json:"api_version"`
	RequestID  *int32          `json:"request_id"`
	BodyHex    string          `json:"body_hex"`
	Message    string          `json:"message"`
	Decoded    json.RawMessage `json:"decoded"`
	// Exact says how a live reply is compared: "always" byte for byte;
	// "reference" byte for byte only against a sidecar in the reference
	// setup; "code" by type, request id and error code.
	Exact    string       `json:"exact"`
	Scenario string       `json:"scenario"`
	Hex      string       `json:"hex"`
	Layout   []LayoutItem `json:"layout"`
}

// LayoutItem explains one run of a frame's bytes.
type LayoutItem struct {
	Hex   string `json:"hex"`
	Field string `json:"field"`
}

// Bytes decodes the frame's hex.
func (f Frame) Bytes() ([]byte, error) { return decodeHex(f.Hex) }

// Body decodes the body hex.
func (f Frame) Body() ([]byte, error) { return decodeHex(f.BodyHex) }

func decodeHex(s string) ([]byte, error) {
	return hex.DecodeString(strings.ReplaceAll(s, " ", ""))
}

// ParseFrame decodes one vector file and checks that it is self-consistent:
// the layout pieces add up to the frame, and the frame's length field
// counts the bytes after it.
func ParseFrame(data []byte) (Frame, error) {
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil {
		return f, err
	}
	raw, err := f.Bytes()
	if err != nil {
		return f, fmt.Errorf("vector %s: hex: %w", f.Name, err)
	}
	var joined []byte
	for _, l := range f.Layout {
		b, err := decodeHex(l.Hex)
		if err != nil {
			return f, fmt.Errorf("vector %s: layout %q: %w", f.Name, l.Field, err)
		}
		joined = append(joined, b...)
	}
	if string(joined) != string(raw) {
		return f, fmt.Errorf("vector %s: the layout does not add up to the frame bytes", f.Name)
	}
	if f.Kind != "invalid" {
		if len(raw) < 4 || int(uint32(raw[0])<<24|uint32(raw[1])<<16|uint32(raw[2])<<8|uint32(raw[3])) != len(raw)-4 {
			return f, fmt.Errorf("vector %s: length field does not match the frame", f.Name)
		}
		body, err := f.Body()
		if err != nil || !strings.HasSuffix(string(raw), string(body)) {
			return f, fmt.Errorf("vector %s: body_hex is not the end of the frame", f.Name)
		}
	}
	return f, nil
}

// LoadFrames reads every vector of dir/frames, keyed by name.
func LoadFrames(dir string) (map[string]Frame, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "frames", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no vectors in %s", filepath.Join(dir, "frames"))
	}
	sort.Strings(paths)
	out := make(map[string]Frame, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, err := ParseFrame(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if f.Name+".json" != filepath.Base(p) {
			return nil, fmt.Errorf("%s: name %q does not match the file", p, f.Name)
		}
		out[f.Name] = f
	}
	return out, nil
}

// StorageVector is one entry of vectors/storage.json.
type StorageVector struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"` // producer_znode or offsets_file
	Source   string `json:"source"`
	Meaning  string `json:"meaning"`
	JSON     string `json:"json"`
	Snapshot *struct {
		ExpirationTime int64 `json:"expiration_time"`
		Tables         []struct {
			TableID     int64  `json:"table_id"`
			OffsetsPath string `json:"offsets_path"`
		} `json:"tables"`
	} `json:"snapshot"`
	DecodedTables []int64 `json:"decoded_tables"`
	TableID       int64   `json:"table_id"`
	Buckets       []struct {
		PartitionID  *int64 `json:"partition_id"`
		BucketID     int32  `json:"bucket_id"`
		LogEndOffset int64  `json:"log_end_offset"`
	} `json:"buckets"`
}

// FsPathVectors is vectors/fspath.json.
type FsPathVectors struct {
	ProducerID string `json:"producer_id"`
	TableID    int64  `json:"table_id"`
	UUID       string `json:"uuid"`
	Rows       []struct {
		Input        string  `json:"input"`
		String       *string `json:"string"`
		Authority    *string `json:"authority"`
		OffsetsPath  string  `json:"offsets_path"`
		ProducersDir string  `json:"producers_dir"`
		Error        string  `json:"error"`
		Meaning      string  `json:"meaning"`
	} `json:"rows"`
}
