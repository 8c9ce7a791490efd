package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/authz/tables"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// MaxACLFileBytes bounds an ACL file.
const MaxACLFileBytes = 1 << 20

// ACLs is a fixed set of ACLs and table names for testing authorization
// denials without ZooKeeper. It decides exactly as a ZooKeeper-backed
// sidecar does (authz.Decide, the internal listener and super users pass),
// and implements both sidecar.Authorizer and sidecar.TableResolver.
//
// An ACL file is JSON:
//
//	{
//	  "tables": {"100": "db1.orders", "200": "db1.audit"},
//	  "acls": [
//	    {"resource": "TABLE:db1.orders", "principal": "User:alice", "operation": "WRITE"},
//	    {"resource": "DATABASE:db1", "principal": "User:bob", "operation": "READ", "host": "127.0.0.1"},
//	    {"resource": "CLUSTER", "principal": "*:*", "operation": "DESCRIBE"}
//	  ]
//	}
//
// "tables" maps the table ids that requests carry to database.table names
// (an id not listed gets UNKNOWN_TABLE_OR_BUCKET_EXCEPTION, as an unknown
// table does on a coordinator). Each ACL allows (Fluss has no DENY) one
// operation (READ, WRITE, DESCRIBE, ALL, ...) on a resource (CLUSTER,
// DATABASE:name, TABLE:database.table, or "*" as the name for every
// resource of the type) to a principal ("User:name", or "*:*"); host is
// "*" when omitted. Anything not allowed is denied.
type ACLs struct {
	internal   string
	superUsers []authz.Principal
	ignoreCase bool
	acls       map[authz.Resource][]authz.ACL
	tables     map[int64]tables.Path
}

type aclFileJSON struct {
	Tables map[string]string `json:"tables"`
	ACLs   []aclEntry        `json:"acls"`
}

type aclEntry struct {
	Resource   string `json:"resource"`
	Principal  string `json:"principal"`
	Operation  string `json:"operation"`
	Permission string `json:"permission"`
	Host       string `json:"host"`
}

// LoadACLFile reads an ACL file (see ACLs); an empty path gives no tables
// and no ACLs (everything denied but to super users and the internal
// listener). sec supplies the internal listener, super users and
// case-insensitivity.
func LoadACLFile(path string, sec authz.Settings) (*ACLs, error) {
	var data []byte
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, MaxACLFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	a, err := ParseACLs(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a.internal, a.superUsers, a.ignoreCase = sec.InternalListener, sec.SuperUsers, sec.IgnoreCase
	return a, nil
}

// ParseACLs parses the JSON of an ACL file. Empty data is no ACLs. Unknown
// keys, a bad resource, principal, operation or table entry are errors, so
// that a typo never silently widens or narrows what a test checks. The
// result has no internal listener and no super users: every listener is
// checked.
func ParseACLs(data []byte) (*ACLs, error) {
	a := &ACLs{acls: map[authz.Resource][]authz.ACL{}, tables: map[int64]tables.Path{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return a, nil
	}
	if len(data) > MaxACLFileBytes {
		return nil, fmt.Errorf("ACL file larger than %d bytes", MaxACLFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc aclFileJSON
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("ACL file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("ACL file: data after the JSON object")
	}
	ids := make([]string, 0, len(doc.Tables))
	for id := range doc.Tables {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, idText := range ids {
		name := doc.Tables[idText]
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("ACL file: table id %q is not an integer", idText)
		}
		db, table, ok := strings.Cut(name, ".")
		if !ok || db == "" || table == "" {
			return nil, fmt.Errorf("ACL file: table %d: name %q is not database.table", id, name)
		}
		a.tables[id] = tables.Path{Database: db, Table: table}
	}
	for i, e := range doc.ACLs {
		r, err := parseResource(e.Resource)
		if err != nil {
			return nil, fmt.Errorf("ACL file: acls[%d]: %w", i, err)
		}
		typ, name, ok := strings.Cut(e.Principal, ":")
		if !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("ACL file: acls[%d]: principal %q is not type:name, e.g. User:alice or *:*", i, e.Principal)
		}
		op, err := authz.ParseOperation(e.Operation)
		if err != nil {
			return nil, fmt.Errorf("ACL file: acls[%d]: %w", i, err)
		}
		perm := authz.PermAllow
		if e.Permission != "" && e.Permission != "ALLOW" {
			return nil, fmt.Errorf("ACL file: acls[%d]: permission %q: Fluss ACLs only ALLOW", i, e.Permission)
		}
		host := e.Host
		if host == "" {
			host = authz.Wildcard
		}
		a.acls[r] = append(a.acls[r], authz.ACL{
			Principal: authz.Principal{Type: typ, Name: name}, Permission: perm, Host: host, Operation: op,
		})
	}
	return a, nil
}

func parseResource(s string) (authz.Resource, error) {
	typ, name, _ := strings.Cut(s, ":")
	t, err := authz.ParseResourceType(typ)
	if err != nil {
		return authz.Resource{}, fmt.Errorf("resource %q: %w (want CLUSTER, DATABASE:name or TABLE:database.table)", s, err)
	}
	switch t {
	case authz.ResourceCluster:
		if name != "" && name != authz.ClusterName {
			return authz.Resource{}, fmt.Errorf("resource %q: the cluster has no name", s)
		}
		return authz.Cluster(), nil
	case authz.ResourceDatabase, authz.ResourceTable:
		if name == "" {
			return authz.Resource{}, fmt.Errorf("resource %q needs a name", s)
		}
		if t == authz.ResourceTable && name != authz.Wildcard && !strings.Contains(name, ".") {
			return authz.Resource{}, fmt.Errorf("resource %q: a table is named database.table", s)
		}
		return authz.Resource{Type: t, Name: name}, nil
	}
	return authz.Resource{}, fmt.Errorf("resource %q: type %s cannot carry ACLs here", s, t)
}

// Lookup maps a table id to its name.
func (a *ACLs) Lookup(id int64) (tables.Path, bool) {
	p, ok := a.tables[id]
	return p, ok
}

// Authorize answers nil or an AUTHORIZATION_EXCEPTION (48), as the
// ZooKeeper-backed authorizer does.
func (a *ACLs) Authorize(s *wire.Session, op authz.Operation, r authz.Resource) error {
	if a.internal != "" && s.ListenerName == a.internal {
		return nil
	}
	p := authz.User(s.Principal())
	for _, su := range a.superUsers {
		if authz.SamePrincipal(su, p, a.ignoreCase) {
			return nil
		}
	}
	req := authz.Request{Principal: p, Host: authz.HostAddress(s.RemoteAddr), Operation: op, Resource: r}
	if authz.Decide(func(r authz.Resource) []authz.ACL { return a.acls[r] }, req, a.ignoreCase) {
		return nil
	}
	return authz.DenialError(p, op, r)
}
