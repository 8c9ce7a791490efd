package app_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

const (
	keyAuthenticate = 1038
	keyRegister     = 1053
	keyGet          = 1054
	keyDelete       = 1055
	tableID         = 1001
	tablePath       = "/metadata/databases/test_db_1/tables/test_pk_table_1"
	guestDenial     = "Principal FlussPrincipal{name='guest', type='User'} have no authorization to operate WRITE on resource Resource{type=TABLE, name='test_db_1.test_pk_table_1'} "
)

type secured struct {
	app    *app.App
	zc     *zk.Client
	client string // SASL listener
	plain  string // PLAINTEXT internal listener
}

// startSecured runs the sidecar as FlussAuthorizationITCase configures a
// Fluss cluster: a SASL listener CLIENT with users root and guest, root a
// super user, the authorizer on; plus the PLAINTEXT internal listener.
func startSecured(t *testing.T, extra string) *secured {
	t.Helper()
	zktest.SkipIfShort(t)
	root := zktest.UniqueRoot()
	zc, err := zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: root, ConnectionTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	reg := `{"version":1,"table_id":1001,"bucket_count":3,"properties":{},"custom_properties":{},"created_time":1,"modified_time":1}`
	if _, err := zc.Create(t.Context(), tablePath, []byte(reg), zk.Persistent); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`
zookeeper.address: %s
zookeeper.path.root: %s
remote.data.dir: file://%s
bind.listeners: FLUSS://127.0.0.1:0, CLIENT://127.0.0.1:0
security.protocol.map: CLIENT:sasl
security.sasl.enabled.mechanisms: PLAIN
security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_root="password" user_guest="password2";
authorizer.enabled: true
super.users: User:root
%s`, sharedZK, root, t.TempDir(), extra)
	c, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	a := apptest.StartConfig(t, c, app.Options{})
	sec := &secured{app: a, zc: zc}
	for _, l := range a.Addrs() {
		switch l.Name {
		case "CLIENT":
			sec.client = l.Address()
		case "FLUSS":
			sec.plain = l.Address()
		}
	}
	return sec
}

func dial(t *testing.T, addr string) *wire.Client {
	t.Helper()
	c, err := wire.Dial(t.Context(), addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

func authenticate(t *testing.T, c *wire.Client, protocol string, token []byte) (*messages.AuthenticateResponse, error) {
	t.Helper()
	resp := &messages.AuthenticateResponse{}
	err := c.Call(t.Context(), keyAuthenticate, 0, &messages.AuthenticateRequest{Protocol: proto.String(protocol), Token: token}, resp)
	return resp, err
}

func login(t *testing.T, addr, user, pw string) *wire.Client {
	t.Helper()
	c := dial(t, addr)
	resp, err := authenticate(t, c, "PLAIN", []byte("\x00"+user+"\x00"+pw))
	if err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	if resp.Challenge == nil || len(resp.Challenge) != 0 {
		t.Fatalf("PLAIN success must carry an empty challenge, got %v", resp.Challenge)
	}
	return c
}

func registerReq(id string, tables ...int64) *messages.RegisterProducerOffsetsRequest {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id)}
	for _, tb := range tables {
		req.TableOffsets = append(req.TableOffsets, &messages.PbProducerTableOffsets{
			TableId:       proto.Int64(tb),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)}},
		})
	}
	return req
}

func register(t *testing.T, c *wire.Client, id string, tables ...int64) error {
	t.Helper()
	return c.Call(t.Context(), keyRegister, 0, registerReq(id, tables...), &messages.RegisterProducerOffsetsResponse{})
}

func deleteID(t *testing.T, c *wire.Client, id string) error {
	t.Helper()
	return c.Call(t.Context(), keyDelete, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, &messages.DeleteProducerOffsetsResponse{})
}

func get(t *testing.T, c *wire.Client, id string) *messages.GetProducerOffsetsResponse {
	t.Helper()
	resp := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(t.Context(), keyGet, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

func wantCode(t *testing.T, err error, code flusserr.Code, msg string) {
	t.Helper()
	fe, ok := flusserr.From(err)
	if !ok || fe.Code != code || (msg != "" && fe.Message != msg) {
		t.Fatalf("got %v, want code %d %q", err, code, msg)
	}
}

// grant writes an ACL as a Fluss coordinator does: the ResourceAcl znode,
// then a change notification.
func grant(t *testing.T, zc *zk.Client, r authz.Resource, acls ...authz.ACL) {
	t.Helper()
	if _, err := zc.Create(t.Context(), authz.ACLPath(r), authz.EncodeResourceACL(acls), zk.Persistent); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Create(t.Context(), authz.ACLChangesPath+"/"+authz.ACLChangePrefix, []byte(r.Type.String()+":"+r.Name), zk.PersistentSequential); err != nil {
		t.Fatal(err)
	}
}

func TestFlussAuthorizationITCase(t *testing.T) {
	s := startSecured(t, "")
	root := login(t, s.client, "root", "password")
	guest := login(t, s.client, "guest", "password2")

	// Without WRITE, guest can neither register nor delete root's snapshot.
	wantCode(t, register(t, guest, "guest-job", tableID), flusserr.AuthorizationException, guestDenial)
	if err := register(t, root, "root-job", tableID); err != nil {
		t.Fatalf("super user register: %v", err)
	}
	wantCode(t, deleteID(t, guest, "root-job"), flusserr.AuthorizationException, guestDenial)
	if got := get(t, guest, "root-job"); got.GetProducerId() != "root-job" || len(got.GetTableOffsets()) != 0 || got.ExpirationTime == nil {
		t.Fatalf("guest get must drop the unreadable table but keep id and expiry: %v", got)
	}
	if got := get(t, root, "root-job"); len(got.GetTableOffsets()) != 1 {
		t.Fatalf("root get: %v", got)
	}

	// Grant (guest, *, WRITE, ALLOW) on the table; both succeed once the
	// notification has been seen.
	grant(t, s.zc, authz.Table("test_db_1", "test_pk_table_1"),
		authz.ACL{Principal: authz.User("guest"), Permission: authz.PermAllow, Host: "*", Operation: authz.OpWrite})
	eventually.Nil(t, "guest register after grant", func() error { return register(t, guest, "guest-job", tableID) })
	if err := deleteID(t, guest, "root-job"); err != nil {
		t.Fatalf("guest delete after grant: %v", err)
	}
	if got := get(t, root, "root-job"); got.ProducerId != nil {
		t.Fatalf("root-job must be gone: %v", got)
	}
	// WRITE does not give READ.
	if got := get(t, guest, "guest-job"); len(got.GetTableOffsets()) != 0 {
		t.Fatalf("WRITE must not imply READ: %v", got)
	}

	// Unknown table id: code 21 with Fluss's message, even for a super user.
	wantCode(t, register(t, root, "x", 999), flusserr.UnknownTableOrBucket,
		"This server coordinator does not know this table ID 999. This may happen when the table metadata cache in the server is not updated yet.")
	// Empty snapshots need nothing by default (Fluss compatible).
	if err := register(t, guest, "guest-empty"); err != nil {
		t.Fatal(err)
	}
	if err := deleteID(t, guest, "guest-empty"); err != nil {
		t.Fatal(err)
	}

	// The PLAINTEXT internal listener is ANONYMOUS and always allowed.
	internal := dial(t, s.plain)
	if err := register(t, internal, "internal-job", tableID); err != nil {
		t.Fatalf("internal listener: %v", err)
	}
}

func TestRequireTableForEmpty(t *testing.T) {
	s := startSecured(t, "sidecar.authorization.require-table-for-empty: true")
	guest := login(t, s.client, "guest", "password2")
	root := login(t, s.client, "root", "password")
	wantCode(t, register(t, guest, "empty"), flusserr.AuthorizationException,
		"Principal FlussPrincipal{name='guest', type='User'} have no authorization to operate WRITE on resource Resource{type=CLUSTER, name='fluss-cluster'} ")
	if err := register(t, root, "empty"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, deleteID(t, guest, "empty"), flusserr.AuthorizationException, "")
	grant(t, s.zc, authz.Cluster(), authz.ACL{Principal: authz.Principal{Name: "*", Type: "*"}, Permission: authz.PermAllow, Host: "*", Operation: authz.OpWrite})
	eventually.Nil(t, "guest delete after cluster grant", func() error { return deleteID(t, guest, "empty") })
}

func TestAuthentication(t *testing.T) {
	s := startSecured(t, "")
	t.Run("unauthenticated requests are refused", func(t *testing.T) {
		c := dial(t, s.client)
		wantCode(t, register(t, c, "x", tableID), flusserr.AuthenticateException, authz.MsgNotAuthenticated)
		wantCode(t, c.Call(t.Context(), 1012, 0, &messages.MetadataRequest{}, &messages.MetadataResponse{}), flusserr.AuthenticateException, authz.MsgNotAuthenticated)
	})
	bad := []struct {
		name, protocol, token string
		msg                   string
	}{
		{"wrong password", "PLAIN", "\x00root\x00password2", authz.MsgBadCredentials},
		{"right length wrong bytes", "PLAIN", "\x00root\x00passworx", authz.MsgBadCredentials},
		{"unknown user", "PLAIN", "\x00nobody\x00password", authz.MsgBadCredentials},
		{"other authzid", "PLAIN", "guest\x00root\x00password", ""},
		{"no NULs", "PLAIN", "rootpassword", ""},
		{"empty token", "PLAIN", "", ""},
		{"mechanism mismatch", "DIGEST-MD5", "x", "SASL server enables [PLAIN] while protocol of client is 'DIGEST-MD5'"},
		{"plaintext client on sasl", "PLAINTEXT", "", "SASL server enables [PLAIN] while protocol of client is 'PLAINTEXT'"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			c := dial(t, s.client)
			_, err := authenticate(t, c, b.protocol, []byte(b.token))
			wantCode(t, err, flusserr.AuthenticateException, b.msg)
			wantCode(t, register(t, c, "x", tableID), flusserr.AuthenticateException, authz.MsgNotAuthenticated)
		})
	}
	t.Run("a failed login is final for the connection", func(t *testing.T) {
		c := dial(t, s.client)
		_, err := authenticate(t, c, "PLAIN", []byte("\x00root\x00nope"))
		wantCode(t, err, flusserr.AuthenticateException, authz.MsgBadCredentials)
		_, err = authenticate(t, c, "PLAIN", []byte("\x00root\x00password"))
		wantCode(t, err, flusserr.AuthenticateException, authz.MsgFailedBefore)
	})
	t.Run("Rust client's second AUTHENTICATE", func(t *testing.T) {
		c := login(t, s.client, "root", "password")
		resp, err := authenticate(t, c, "PLAIN", []byte{})
		if err != nil || resp.Challenge != nil {
			t.Fatalf("second AUTHENTICATE: %v %v", resp, err)
		}
		if err := register(t, c, "rust-job", tableID); err != nil {
			t.Fatalf("identity lost after second AUTHENTICATE: %v", err)
		}
	})
	t.Run("plaintext listener", func(t *testing.T) {
		c := dial(t, s.plain)
		_, err := authenticate(t, c, "PLAIN", []byte("\x00root\x00password"))
		wantCode(t, err, flusserr.AuthenticateException, "Authenticate protocol not match: protocol of server is 'PLAINTEXT' while protocol of client is 'PLAIN'")
		if got := get(t, c, "nothing"); got.ProducerId != nil {
			t.Fatal(got)
		}
	})
}

func TestAuthenticationDeadline(t *testing.T) {
	s := startSecured(t, "sidecar.authentication.timeout: 300 ms")
	silent, err := net.Dial("tcp", s.client)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silent.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !strings.Contains(fmt.Sprint(err), "reset") {
		t.Fatalf("a silent connection must be closed by the server, got %v", err)
	}
	// An authenticated connection outlives the deadline.
	c := login(t, s.client, "root", "password")
	time.Sleep(600 * time.Millisecond) // nothing must happen for a while: the 300 ms deadline passes and c stays open
	if err := register(t, c, "late", tableID); err != nil {
		t.Fatalf("authenticated connection after the deadline: %v", err)
	}
	// The PLAINTEXT listener has no deadline.
	p := dial(t, s.plain)
	time.Sleep(600 * time.Millisecond) // nothing must happen for a while: 300 ms pass and p stays open
	if got := get(t, p, "late"); got.GetProducerId() != "late" {
		t.Fatal(got)
	}
}
