package proxy

import (
	"bytes"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

func TestMetadataCoordinator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body []byte
		want string // "" for none
	}{
		{"full", readHex(t, "metadata_full.in.hex"), "127.0.0.1:9124"},
		{"no coordinator", readHex(t, "metadata_no_coordinator.in.hex"), ""},
		{"no host or port", readHex(t, "metadata_missing_address.in.hex"), ""},
		{"port missing", readHex(t, "metadata_repeated_host.in.hex"), ""},
		{"field 1 as a varint", readHex(t, "metadata_wrong_wire_type.in.hex"), ""},
		{"empty", nil, ""},
		{"last host wins", []byte{0x0a, 0x08, 0x12, 0x01, 'a', 0x12, 0x01, 'b', 0x18, 0x05}, "b:5"},
		{"coordinator_server split in two", []byte{0x0a, 0x03, 0x12, 0x01, 'a', 0x0a, 0x02, 0x18, 0x07}, "a:7"},
		{"port as bytes ignored", []byte{0x0a, 0x06, 0x12, 0x01, 'a', 0x1a, 0x01, 0x07}, ""},
		{"IPv6 host", []byte{0x0a, 0x07, 0x12, 0x03, ':', ':', '1', 0x18, 0x09}, "[::1]:9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := MetadataCoordinator(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tt.want != "") || got != tt.want {
				t.Fatalf("MetadataCoordinator = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
	for _, body := range [][]byte{{0x0a, 0x05, 0x08}, {0xff}, {0x0a, 0x02, 0x12, 0x05}, {0x0b}} {
		if _, _, err := MetadataCoordinator(body); err == nil {
			t.Errorf("MetadataCoordinator(%x): no error", body)
		}
	}
}

// FuzzMetadataCoordinator: the field scan agrees with the generated
// decoder wherever the decoder accepts the body, and fails only on bodies
// the decoder refuses too.
func FuzzMetadataCoordinator(f *testing.F) {
	for _, name := range []string{"full", "no_coordinator", "missing_address", "repeated_host", "wrong_wire_type"} {
		f.Add(readHex(f, "metadata_"+name+".in.hex"))
	}
	f.Add([]byte{0x0a, 0x03, 0x12, 0x01, 'a', 0x0a, 0x02, 0x18, 0x07})
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok, err := MetadataCoordinator(body)
		var md messages.MetadataResponse
		derr := proto.UnmarshalOptions{AllowPartial: true}.Unmarshal(body, &md)
		if err != nil {
			if derr == nil {
				t.Fatalf("scan failed (%v) on a body the decoder accepts: %v", err, &md)
			}
			return
		}
		if derr != nil {
			return // malformed beyond what the scan reads
		}
		cs := md.GetCoordinatorServer()
		want, wantOK := "", cs != nil && cs.Host != nil && cs.Port != nil
		if wantOK {
			want = net.JoinHostPort(cs.GetHost(), strconv.Itoa(int(cs.GetPort())))
		}
		if got != want || ok != wantOK {
			t.Fatalf("scan gives %q, %v; the decoder %q, %v (%v)", got, ok, want, wantOK, &md)
		}
	})
}
