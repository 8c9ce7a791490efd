package embedded_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/authz/tables"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// Connections of the authorization script: 0 alice, 1 bob, 2 root (a super
// user) and 4 nobody on the SASL listener CLIENT; 3 on the internal
// PLAINTEXT listener FLUSS.
const (
	asAlice = iota
	asBob
	asRoot
	onInternal
	notLoggedIn
)

// authzScript runs the same requests with ACLs kept in ZooKeeper and with
// the same ACLs in testdata/acls.json.
var authzScript = []pstep{
	{name: "alice logs in", conn: asAlice, reqs: []preq{authReq("\x00alice\x00a-pw", 0)}},
	{name: "bob logs in", conn: asBob, reqs: []preq{authReq("\x00bob\x00b-pw", 0)}},
	{name: "root logs in", conn: asRoot, reqs: []preq{authReq("\x00root\x00r-pw", 0)}},
	{name: "alice writes", conn: asAlice, reqs: []preq{
		reg("a1", expect{}, table(100, bucket(0, 1))),
		reg("a2", expect{code: flusserr.AuthorizationException}, table(200, bucket(0, 1))),
		reg("a3", expect{}, table(300, bucket(0, 1))),
		reg("a4", expect{code: flusserr.UnknownTableOrBucket}, table(999, bucket(0, 1))),
		reg("a5", expect{code: flusserr.AuthorizationException}, table(100, bucket(0, 1)), table(200, bucket(0, 1))),
		reg("a6", expect{}),
	}},
	{name: "bob reads but does not write", conn: asBob, reqs: []preq{
		reg("b1", expect{code: flusserr.AuthorizationException}, table(100, bucket(0, 1))),
		getReq("a1", yes),
		getReq("a3", nil),
		failing(delReq("a1"), flusserr.AuthorizationException),
	}},
	{name: "root is a super user", conn: asRoot, reqs: []preq{reg("r1", expect{}, table(200, bucket(0, 1)))}},
	{name: "root deletes", conn: asRoot, reqs: []preq{delReq("r1")}},
	{name: "the internal listener skips ACLs, not table names", conn: onInternal, reqs: []preq{
		reg("i1", expect{}, table(200, bucket(0, 1))),
		reg("i2", expect{code: flusserr.UnknownTableOrBucket}, table(999, bucket(0, 1))),
	}},
	{name: "no login", conn: notLoggedIn, reqs: []preq{failing(getReq("a1", nil), flusserr.AuthenticateException)}},
	{name: "alice deletes", conn: asAlice, reqs: []preq{delReq("a1"), delReq("a3"), delReq("a6")}},
	{name: "alice may not delete db1.audit's snapshot", conn: asAlice, reqs: []preq{failing(delReq("i1"), flusserr.AuthorizationException)}},
}

// TestParityAuthorization: ACLs and table names from ZooKeeper, and the same
// from an embedded ACL file, give the same answers.
func TestParityAuthorization(t *testing.T) {
	zks := zktest.StartT(t)
	common := map[string]string{
		"bind.listeners":                  "FLUSS://127.0.0.1:0, CLIENT://127.0.0.1:0",
		"security.protocol.map":           "CLIENT:SASL",
		"security.sasl.plain.jaas.config": `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_alice="a-pw" user_bob="b-pw" user_root="r-pw";`,
		"authorizer.enabled":              "true",
		"super.users":                     "User:root",
	}
	zkCfg := apptest.Config(t, zks.Addr, common)
	root, _ := zkCfg.Lookup("zookeeper.path.root")
	zc, err := zk.Connect(t.Context(), zk.Config{Address: zks.Addr, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	// The tables and ACLs of testdata/acls.json, stored as a Fluss cluster
	// stores them.
	for id, name := range map[int64][2]string{100: {"db1", "orders"}, 200: {"db1", "audit"}, 300: {"db2", "events"}} {
		data := fmt.Sprintf(`{"version":1,"table_id":%d,"bucket_count":3,"properties":{},"custom_properties":{},"created_time":1,"modified_time":1}`, id)
		if _, err := zc.Create(t.Context(), tables.DatabasesPath+"/"+name[0]+"/tables/"+name[1], []byte(data), zk.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	acl := func(p authz.Principal, op authz.Operation, host string) authz.ACL {
		return authz.ACL{Principal: p, Permission: authz.PermAllow, Host: host, Operation: op}
	}
	for r, acls := range map[authz.Resource][]authz.ACL{
		authz.Table("db1", "orders"): {acl(authz.User("alice"), authz.OpWrite, "*")},
		authz.Database("db2"):        {acl(authz.User("alice"), authz.OpAll, "127.0.0.1")},
		authz.Database("db1"):        {acl(authz.User("bob"), authz.OpRead, "*")},
		authz.Cluster():              {acl(authz.Principal{Name: "*", Type: "*"}, authz.OpDescribe, "*")},
	} {
		if _, err := zc.Create(t.Context(), authz.ACLPath(r), authz.EncodeResourceACL(acls), zk.Persistent); err != nil {
			t.Fatal(err)
		}
	}

	memCfg := config.New()
	for k, v := range common {
		memCfg.Set(k, v)
	}
	memCfg.Set(app.KeyEmbedded, "true")
	memCfg.Set(app.KeyEmbeddedACLFile, filepath.Join("testdata", "acls.json"))

	run := func(t *testing.T, c *config.Config) [][]answer {
		clock := &parityClock{}
		clock.ms.Store(parityStart)
		a := apptest.StartConfig(t, c, app.Options{Now: clock.now})
		addrs := map[string]string{}
		for _, l := range a.Addrs() {
			addrs[l.Name] = l.Address()
		}
		return runScript(t, authzScript, func(conn int) string {
			if conn == onInternal {
				return addrs["FLUSS"]
			}
			return addrs["CLIENT"]
		}, clock, nil)
	}
	var zkAnswers, memAnswers [][]answer
	t.Run("zookeeper", func(t *testing.T) { zkAnswers = run(t, zkCfg) })
	t.Run("embedded", func(t *testing.T) { memAnswers = run(t, memCfg) })
	compareAnswers(t, authzScript, zkAnswers, memAnswers)
}
