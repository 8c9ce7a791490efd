package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

type aclEntryJSON struct {
	PrincipalType  *string `json:"principal_type"`
	PrincipalName  *string `json:"principal_name"`
	PermissionType *string `json:"permission_type"`
	Host           *string `json:"host"`
	Operation      *string `json:"operation"`
}

type resourceACLJSON struct {
	Version *int            `json:"version"`
	ACLs    json.RawMessage `json:"acls"`
}

// DecodeResourceACL decodes the ResourceAcl JSON of a /fluss-acls/<TYPE>/<name>
// znode: {"version":1,"acls":[{"principal_type":..,"principal_name":..,
// "permission_type":..,"host":..,"operation":..}]}. As in Fluss the version
// is not checked, enum names are case-sensitive and a missing or non-array
// "acls" means no entries. Every field of an entry is required. Empty data
// decodes to no ACLs.
func DecodeResourceACL(data []byte) ([]ACL, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var doc resourceACLJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode ResourceAcl: %w", err)
	}
	var raw []json.RawMessage
	if len(doc.ACLs) == 0 || json.Unmarshal(doc.ACLs, &raw) != nil {
		return nil, nil
	}
	out := make([]ACL, 0, len(raw))
	for i, r := range raw {
		var e aclEntryJSON
		if err := json.Unmarshal(r, &e); err != nil {
			return nil, fmt.Errorf("decode ResourceAcl entry %d: %w", i, err)
		}
		if e.PrincipalType == nil || e.PrincipalName == nil || e.PermissionType == nil || e.Host == nil || e.Operation == nil {
			return nil, fmt.Errorf("decode ResourceAcl entry %d: %w", i, errors.New("principal_type, principal_name, permission_type, host and operation are required"))
		}
		perm, err := ParsePermission(*e.PermissionType)
		if err != nil {
			return nil, fmt.Errorf("decode ResourceAcl entry %d: %w", i, err)
		}
		op, err := ParseOperation(*e.Operation)
		if err != nil {
			return nil, fmt.Errorf("decode ResourceAcl entry %d: %w", i, err)
		}
		out = append(out, ACL{
			Principal:  Principal{Name: *e.PrincipalName, Type: *e.PrincipalType},
			Permission: perm, Host: *e.Host, Operation: op,
		})
	}
	return out, nil
}

// EncodeResourceACL writes ResourceAcl JSON in Fluss's key order; tests use
// it to put ACLs into ZooKeeper as a Fluss coordinator would.
func EncodeResourceACL(acls []ACL) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":1,"acls":[`)
	for i, a := range acls {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"principal_type":%s,"principal_name":%s,"permission_type":%s,"host":%s,"operation":%s}`,
			jsonString(a.Principal.Type), jsonString(a.Principal.Name), jsonString(a.Permission.String()),
			jsonString(a.Host), jsonString(a.Operation.String()))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
