package proxy

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// readHex reads a testdata hex file; '#' starts a comment line.
func readHex(t testing.TB, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			sb.WriteString(strings.Join(strings.Fields(line), ""))
		}
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func TestRewriteMetadataGolden(t *testing.T) {
	for _, name := range []string{"full", "no_coordinator", "missing_address", "repeated_host", "wrong_wire_type", "empty"} {
		t.Run(name, func(t *testing.T) {
			in := readHex(t, "metadata_"+name+".in.hex")
			want := readHex(t, "metadata_"+name+".out.hex")
			inCopy := bytes.Clone(in)
			got, err := RewriteMetadata(in, "sidecar", 9123)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %x\nwant %x", got, want)
			}
			if !bytes.Equal(in, inCopy) {
				t.Fatal("the input was modified")
			}
		})
	}
}

// TestRewriteMetadataDecodes checks the full golden output against the
// generated messages: only host and port differ.
func TestRewriteMetadataDecodes(t *testing.T) {
	var in, out messages.MetadataResponse
	if err := proto.Unmarshal(readHex(t, "metadata_full.in.hex"), &in); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(readHex(t, "metadata_full.out.hex"), &out); err != nil {
		t.Fatal(err)
	}
	in.CoordinatorServer.Host = proto.String("sidecar")
	in.CoordinatorServer.Port = proto.Int32(9123)
	if !proto.Equal(&in, &out) {
		t.Fatalf("got %v, want %v", &out, &in)
	}
}

func TestRewriteMetadataRejectsGarbage(t *testing.T) {
	tests := []struct {
		name string
		body []byte
	}{
		{"truncated length", []byte{0x0a, 0x05, 0x08}},
		{"bad tag", []byte{0xff}},
		{"truncated node field", []byte{0x0a, 0x02, 0x12, 0x05}},
		{"group type", []byte{0x0b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := RewriteMetadata(tt.body, "h", 1); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func FuzzRewriteMetadata(f *testing.F) {
	for _, name := range []string{"full", "no_coordinator", "missing_address", "repeated_host", "wrong_wire_type"} {
		f.Add(readHex(f, "metadata_"+name+".in.hex"), "sidecar", int32(9123))
	}
	f.Fuzz(func(t *testing.T, body []byte, host string, port int32) {
		out, err := RewriteMetadata(body, host, port)
		if err != nil {
			return
		}
		var in, got messages.MetadataResponse
		opts := proto.UnmarshalOptions{AllowPartial: true, DiscardUnknown: true}
		if opts.Unmarshal(body, &in) != nil {
			return // well-formed wire bytes that are not a MetadataResponse
		}
		if err := opts.Unmarshal(out, &got); err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		if in.CoordinatorServer == nil {
			if !bytes.Equal(out, body) {
				t.Fatalf("body without coordinator changed: %x -> %x", body, out)
			}
			return
		}
		if got.GetCoordinatorServer().GetHost() != host || got.GetCoordinatorServer().GetPort() != port {
			t.Fatalf("coordinator %v, want %s:%d", got.GetCoordinatorServer(), host, port)
		}
		got.CoordinatorServer.Host, got.CoordinatorServer.Port = in.CoordinatorServer.Host, in.CoordinatorServer.Port
		if !proto.Equal(&in, &got) {
			t.Fatalf("other fields changed: %v -> %v", &in, &got)
		}
	})
}
