package compat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/rawconn"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The reference setup of vectors/gen_vectors.py: with it every reply of the
// scenario is deterministic, byte for byte.
const (
	refNowMillis        = 1735538268000
	refAdvertised       = "FLUSS://127.0.0.1:9123"
	refTabletAdvertised = "FLUSS://127.0.0.1:9124"
)

// refSidecar is a reference sidecar's bound coordinator and tablet-server
// endpoints (GET_METADATA announces 9123 and 9124 instead).
type refSidecar struct{ addr, tablet string }

// startReferenceSidecar starts a whole sidecar (app.Start) on a real
// ZooKeeper, bound to free ports, advertising 127.0.0.1:9123 and its
// tablet-server endpoint as 127.0.0.1:9124, with the clock fixed at the
// reference time and the default 24 h ttl.
func startReferenceSidecar(t *testing.T) refSidecar {
	t.Helper()
	zks := zktest.StartT(t)
	c := apptest.Config(t, zks.Addr, map[string]string{"advertised.listeners": refAdvertised, app.KeyTabletAdvertised: refTabletAdvertised})
	s, err := app.FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.ProducerOffsetsTTL != 24*time.Hour || s.NodeID != 0 {
		t.Fatalf("the defaults changed (ttl %v, node id %d): the reference vectors assume 24h and 0", s.ProducerOffsetsTTL, s.NodeID)
	}
	a := apptest.StartConfig(t, c, app.Options{Now: func() time.Time { return time.UnixMilli(refNowMillis) }})
	return refSidecar{addr: a.Addr(), tablet: a.TabletAddrs()[0].Address()}
}

// rawConn sends vector bytes as they are and reads reply frames.
type rawConn = rawconn.Conn[wire.Response]

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	return rawconn.Dial(t, addr, wire.ParseResponse)
}

// responseFor is the response message of each served api key.
var responseFor = map[int16]func() proto.Message{
	1000: func() proto.Message { return &messages.ApiVersionsResponse{} },
	1012: func() proto.Message { return &messages.MetadataResponse{} },
	1038: func() proto.Message { return &messages.AuthenticateResponse{} },
	1053: func() proto.Message { return &messages.RegisterProducerOffsetsResponse{} },
	1054: func() proto.Message { return &messages.GetProducerOffsetsResponse{} },
	1055: func() proto.Message { return &messages.DeleteProducerOffsetsResponse{} },
}

// checkStrict applies the Rust-client rule of docs/protocol.md §8 to a reply: a
// SUCCESS body must decode as the api key's response with every required
// field present (proto.Unmarshal without AllowPartial checks them), and a
// REGISTER reply must set result (Rust reads an absent one as "unknown").
func checkStrict(t *testing.T, apiKey int16, frame []byte) {
	t.Helper()
	r, err := wire.ParseResponse(frame[4:])
	if err != nil {
		t.Fatalf("reply %x: %v", frame, err)
	}
	if r.Type != wire.ResponseSuccess {
		return
	}
	m := responseFor[apiKey]()
	if err := proto.Unmarshal(r.Body, m); err != nil {
		t.Fatalf("SUCCESS body of api key %d fails a strict decode: %v", apiKey, err)
	}
	if reg, ok := m.(*messages.RegisterProducerOffsetsResponse); ok && reg.Result == nil {
		t.Fatalf("REGISTER reply without result: %x", frame)
	}
}

// goStep is one exchange of the scenario: the request vectors sent together,
// and the reply vector expected for each (any order).
type goStep struct {
	send    []string
	replies []string
}

// TestLiveScenarioGo runs the scenario by sending the request vectors' own
// bytes to a reference sidecar and comparing every reply with its vector,
// byte for byte ("code" vectors by type, id and error code). It also checks
// every SUCCESS with a strict decoder (Rust quirk, docs/protocol.md §8).
func TestLiveScenarioGo(t *testing.T) {
	liveScenarioGo(t, startReferenceSidecar(t))
}

// liveScenarioGo runs TestLiveScenarioGo's scenario against the reference
// sidecar at addr.
func liveScenarioGo(t *testing.T, ref refSidecar) {
	frames := loadFrames(t)
	addr := ref.addr
	runAt := func(t *testing.T, addr string, steps []goStep) *rawConn {
		c := dialRaw(t, addr)
		for _, s := range steps {
			var batch []byte
			keys := map[int32]int16{}
			want := map[int32]Frame{}
			for i, name := range s.send {
				f := frames[name]
				b, _ := f.Bytes()
				batch = append(batch, b...)
				keys[*f.RequestID] = *f.APIKey
				want[*f.RequestID] = frames[s.replies[i]]
			}
			c.Write(batch)
			for range s.send {
				got := c.ReadFrame()
				r, err := wire.ParseResponse(got[4:])
				if err != nil {
					t.Fatal(err)
				}
				w, ok := want[r.RequestID]
				if !ok {
					t.Fatalf("reply to an unknown request id %d: %x", r.RequestID, got)
				}
				delete(want, r.RequestID)
				checkStrict(t, keys[r.RequestID], got)
				compareReply(t, w, got)
			}
		}
		return c
	}
	run := func(t *testing.T, steps []goStep) *rawConn { return runAt(t, addr, steps) }
	t.Run("main", func(t *testing.T) {
		run(t, []goStep{
			{[]string{"api_versions_request"}, []string{"api_versions_response"}},
			{[]string{"metadata_request_empty"}, []string{"metadata_response"}},
			{[]string{"register_request_nonpartitioned"}, []string{"register_response_created"}},
			{[]string{"register_request_again"}, []string{"register_response_already_exists"}},
			{[]string{"get_request"}, []string{"get_response_nonpartitioned"}},
			{[]string{"get_request_missing"}, []string{"get_response_not_found"}},
			{[]string{"delete_request"}, []string{"delete_response"}},
			{[]string{"get_request_invalid_id"}, []string{"error_63_invalid_producer_id"}},
			{[]string{"register_request_partitioned", "register_request_empty", "delete_request_missing", "register_request_invalid_dot", "create_database_request"},
				[]string{"register_response_created_8", "register_response_created_9", "delete_response_10", "error_63_dot", "error_2_not_served"}},
			{[]string{"get_request_partitioned"}, []string{"get_response_partitioned"}},
			{[]string{"get_request_empty"}, []string{"get_response_empty"}},
			{[]string{"register_request_malformed"}, []string{"error_3_malformed"}},
			{[]string{"delete_request_partitioned"}, []string{"delete_response_16"}},
			{[]string{"delete_request_empty"}, []string{"delete_response_17"}},
		})
	})
	t.Run("auth", func(t *testing.T) {
		run(t, []goStep{
			{[]string{"api_versions_request"}, []string{"api_versions_response"}},
			{[]string{"authenticate_request_plain"}, []string{"error_46_plaintext"}},
			{[]string{"authenticate_request_plaintext"}, []string{"authenticate_response_plaintext"}},
		})
	})
	t.Run("tablet", func(t *testing.T) {
		runAt(t, ref.tablet, []goStep{
			{[]string{"api_versions_request"}, []string{"tablet_api_versions_response"}},
			{[]string{"metadata_request_empty"}, []string{"metadata_response"}},
			{[]string{"register_request_nonpartitioned"}, []string{"tablet_error_2_elsewhere"}},
		})
	})
	t.Run("server_failure", func(t *testing.T) {
		c := dialRaw(t, addr)
		b, _ := frames["negative_length_frame"].Bytes()
		c.Write(b)
		compareReply(t, frames["server_failure_negative_length"], c.ReadFrame())
		if frame, err := c.TryReadFrame(); !errors.Is(err, io.EOF) {
			t.Fatalf("after SERVER_FAILURE: read %x, %v; want the connection closed", frame, err)
		}
	})
}

// compareReply compares a live reply with its vector: byte for byte, or for
// "code" vectors by type, request id and error code.
func compareReply(t *testing.T, w Frame, got []byte) {
	t.Helper()
	want, _ := w.Bytes()
	if w.Exact != "code" {
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got  % x\n want % x", w.Name, got, want)
		}
		return
	}
	gr, err1 := wire.ParseResponse(got[4:])
	wr, err2 := wire.ParseResponse(want[4:])
	if err1 != nil || err2 != nil || gr.Type != wr.Type || gr.RequestID != wr.RequestID {
		t.Fatalf("%s: got % x, want % x", w.Name, got, want)
	}
	gc, ok1 := errorCode(gr)
	wc, ok2 := errorCode(wr)
	if !ok1 || !ok2 || gc != wc {
		t.Fatalf("%s: got %v, want code %d", w.Name, gr.Err(), wc)
	}
}

func errorCode(r wire.Response) (int32, bool) {
	var m messages.ErrorResponse
	if err := proto.Unmarshal(r.Body, &m); err != nil {
		return 0, false
	}
	return m.GetErrorCode(), true
}

// TestRustQuirksPlaintext: on a PLAINTEXT listener an AUTHENTICATE that
// names PLAINTEXT may come twice (the Rust client answers every challenge
// with one more), each gets an empty SUCCESS, and the connection keeps
// serving. The SASL variant (a second AUTHENTICATE after PLAIN succeeds)
// belongs to the SASL work.
func TestRustQuirksPlaintext(t *testing.T) {
	addr := startReferenceSidecar(t).addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		req := &messages.AuthenticateRequest{Protocol: proto.String("PLAINTEXT"), Token: []byte{}}
		body, _ := proto.Marshal(req)
		r, err := c.CallRaw(ctx, 1038, 0, body)
		if err != nil || r.Type != wire.ResponseSuccess || len(r.Body) != 0 {
			t.Fatalf("AUTHENTICATE #%d: %+v %v", i+1, r, err)
		}
	}
	var resp messages.RegisterProducerOffsetsResponse
	err = c.Call(ctx, 1053, 0, &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("rust-1")}, &resp)
	if err != nil || resp.Result == nil || resp.GetResult() != 0 {
		t.Fatalf("register after two AUTHENTICATEs: %v %v", &resp, err)
	}
}

// TestRustQuirksSASL covers the Rust client on a SASL listener (docs/protocol.md
// §8): after PLAIN succeeds with an empty challenge, it sends one more
// AUTHENTICATE whose token is that challenge. The sidecar must answer it
// and keep the login.
func TestRustQuirksSASL(t *testing.T) {
	zks := zktest.StartT(t)
	a := apptest.Start(t, zks.Addr, map[string]string{
		"security.protocol.map":           "FLUSS:SASL",
		"security.sasl.plain.jaas.config": `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_rust="rust-pw";`,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ := proto.Marshal(&messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: []byte("\x00rust\x00rust-pw")})
	r, err := c.CallRaw(ctx, 1038, 0, first)
	if err != nil || r.Type != wire.ResponseSuccess || !bytes.Equal(r.Body, []byte{0x0a, 0x00}) {
		t.Fatalf("PLAIN login: want SUCCESS with challenge 0A 00, got %+v %v", r, err)
	}
	var challenge messages.AuthenticateResponse
	if err := proto.Unmarshal(r.Body, &challenge); err != nil || challenge.Challenge == nil {
		t.Fatalf("challenge: %v", err)
	}
	second, _ := proto.Marshal(&messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: challenge.Challenge})
	r, err = c.CallRaw(ctx, 1038, 0, second)
	if err != nil || r.Type != wire.ResponseSuccess {
		t.Fatalf("the second AUTHENTICATE must succeed: %+v %v", r, err)
	}
	var resp messages.RegisterProducerOffsetsResponse
	err = c.Call(ctx, 1053, 0, &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("rust-sasl")}, &resp)
	if err != nil || resp.Result == nil || resp.GetResult() != 0 {
		t.Fatalf("register after the second AUTHENTICATE: %v %v", &resp, err)
	}
}

// findTools returns what the foreign clients need, installing the Debian
// packages through scripts/install-deps.sh when something is missing.
func findTools(t *testing.T) {
	t.Helper()
	SkipIfShort(t)
	missing := func() []string {
		var m []string
		for _, tool := range []string{"protoc", "javac", "java"} {
			if _, err := exec.LookPath(tool); err != nil {
				m = append(m, tool)
			}
		}
		if _, err := os.Stat("/usr/share/java/protobuf.jar"); err != nil {
			m = append(m, "/usr/share/java/protobuf.jar")
		}
		if exec.Command("/usr/bin/python3", "-c", "import google.protobuf").Run() != nil &&
			exec.Command("python3", "-c", "import google.protobuf").Run() != nil {
			m = append(m, "python3 with google.protobuf")
		}
		return m
	}
	m := missing()
	if len(m) == 0 {
		return
	}
	if os.Geteuid() != 0 {
		t.Skipf("SKIPPING the foreign-language clients: %s missing and not root to install them; run scripts/install-deps.sh as root", strings.Join(m, ", "))
	}
	out, err := exec.Command("../scripts/install-deps.sh").CombinedOutput()
	if m2 := missing(); len(m2) > 0 {
		t.Fatalf("%s still missing after scripts/install-deps.sh (%v):\n%s", strings.Join(m2, ", "), err, out)
	}
}

// TestForeignClients builds the Python and Java clients from Debian
// packages and messages/fluss.proto and runs their scenario against a
// reference sidecar; every deterministic reply is compared byte for byte.
func TestForeignClients(t *testing.T) {
	findTools(t)
	foreignClients(t, startReferenceSidecar(t))
}

// foreignClients runs the Python and Java clients in the reference mode
// against ref.
func foreignClients(t *testing.T, ref refSidecar) {
	for _, client := range []string{"python", "java"} {
		t.Run(client, func(t *testing.T) {
			out, err := runClient(client, ref, "")
			t.Logf("%s client output:\n%s", client, out)
			if err != nil {
				t.Fatalf("%s client failed: %v", client, err)
			}
			if !strings.Contains(out, "\nPASS "+client+": all steps") || strings.Contains(out, "\nFAIL ") {
				t.Fatalf("%s client did not pass every step", client)
			}
			if n := strings.Count(out, "\nPASS "); n < 15 {
				t.Fatalf("%s client passed only %d steps", client, n)
			}
		})
	}
}

// refSASL are the keys that put the reference listener under SASL/PLAIN
// with the user of the "sasl" scenario.
var refSASL = map[string]string{
	"security.protocol.map":           "FLUSS:SASL",
	"security.sasl.plain.jaas.config": `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_user="pass";`,
}

// TestForeignClientsSASL: the Python and Java clients log in with
// SASL/PLAIN on the coordinator and on the tablet server of a reference
// sidecar whose listener has SASL, in ZooKeeper and embedded mode, and
// each endpoint answers with its own type and the same metadata.
func TestForeignClientsSASL(t *testing.T) {
	findTools(t)
	zks := zktest.StartT(t)
	for _, mode := range []struct {
		name  string
		start func(t *testing.T) refSidecar
	}{
		{"zookeeper", func(t *testing.T) refSidecar { return startReferenceOn(t, apptest.Config(t, zks.Addr, refSASL)) }},
		{"embedded", func(t *testing.T) refSidecar {
			c := config.New()
			c.Set("bind.listeners", "FLUSS://127.0.0.1:0")
			c.Set(app.KeyEmbedded, "true")
			for k, v := range refSASL {
				c.Set(k, v)
			}
			return startReferenceOn(t, c)
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ref := mode.start(t)
			for _, client := range []string{"python", "java"} {
				out, err := runClient(client, ref, "", "--sasl")
				t.Logf("%s client output:\n%s", client, out)
				if err != nil || !strings.Contains(out, "\nPASS "+client+": all steps") || strings.Contains(out, "\nFAIL ") ||
					strings.Count(out, "\nPASS SASL ") != 2 {
					t.Fatalf("%s client did not pass both SASL steps: %v", client, err)
				}
			}
		})
	}
}

// startReferenceOn starts c with the reference addresses and clock.
func startReferenceOn(t *testing.T, c *config.Config) refSidecar {
	t.Helper()
	c.Set("advertised.listeners", refAdvertised)
	c.Set(app.KeyTabletAdvertised, refTabletAdvertised)
	a := apptest.StartConfig(t, c, app.Options{Now: func() time.Time { return time.UnixMilli(refNowMillis) }})
	return refSidecar{addr: a.Addr(), tablet: a.TabletAddrs()[0].Address()}
}

// runClient runs compat_test/run.sh for one client in the reference mode,
// with extra arguments; protoDir, if set, replaces messages/ (for the
// mutation check).
func runClient(client string, ref refSidecar, protoDir string, extra ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The tablet endpoint's real address: the reference GET_METADATA
	// announces one nobody listens on.
	args := append([]string{"--bootstrap", ref.addr, "--tablet", ref.tablet, "--client", client, "--reference"}, extra...)
	cmd := exec.CommandContext(ctx, "./run.sh", args...)
	if protoDir != "" {
		cmd.Env = append(os.Environ(), "COMPAT_PROTO="+filepath.Join(protoDir, "fluss.proto"))
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out: %w", ctx.Err())
	}
	return string(out), err
}

// TestForeignClientCatchesABrokenNumber runs the Python client with a copy
// of fluss.proto in which PbBucketOffset.log_end_offset is field 3 instead
// of 4: the client must fail (its requests no longer match the vectors, and
// the sidecar's replies no longer decode to the offsets it sent).
func TestForeignClientCatchesABrokenNumber(t *testing.T) {
	findTools(t)
	src, err := os.ReadFile(protoPath)
	if err != nil {
		t.Fatal(err)
	}
	mutated := strings.Replace(string(src), "optional int64 log_end_offset = 4;", "optional int64 log_end_offset = 3;", 1)
	if mutated == string(src) {
		t.Fatal("log_end_offset = 4 not found")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fluss.proto"), []byte(mutated), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runClient("python", startReferenceSidecar(t), dir)
	t.Logf("python client with log_end_offset = 3:\n%s", out)
	if err == nil {
		t.Fatal("the client passed with a broken field number")
	}
	for _, want := range []string{"\nFAIL register job-1 -> CREATED: request register_request_nonpartitioned: we encode", "\nFAIL python:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
