package authz

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// PrincipalTypeUser is the type of every principal a Fluss server creates.
const PrincipalTypeUser = "User"

// AnonymousName is the principal name of PLAINTEXT connections.
const AnonymousName = "ANONYMOUS"

// Wildcard matches any principal name and type, any host, and, as a
// resource name, every resource of its type.
const Wildcard = "*"

// ClusterName is the name of the one CLUSTER resource.
const ClusterName = "fluss-cluster"

// Principal is an identity: a name and a type.
type Principal struct {
	Name string
	Type string
}

// User is the principal of a user name.
func User(name string) Principal { return Principal{Name: name, Type: PrincipalTypeUser} }

// String renders the principal as Fluss does in error messages.
func (p Principal) String() string {
	return "FlussPrincipal{name='" + p.Name + "', type='" + p.Type + "'}"
}

// ResourceType is Fluss's ResourceType enum.
type ResourceType int8

// Resource types with Fluss's codes.
const (
	ResourceAny      ResourceType = 1
	ResourceCluster  ResourceType = 2
	ResourceDatabase ResourceType = 3
	ResourceTable    ResourceType = 4
)

var resourceTypeNames = map[ResourceType]string{
	ResourceAny: "ANY", ResourceCluster: "CLUSTER", ResourceDatabase: "DATABASE", ResourceTable: "TABLE",
}

// ResourceTypes lists every type whose ACLs are loaded from ZooKeeper.
var resourceTypes = []ResourceType{ResourceAny, ResourceCluster, ResourceDatabase, ResourceTable}

func (t ResourceType) String() string {
	if n, ok := resourceTypeNames[t]; ok {
		return n
	}
	return "ResourceType(" + strconv.Itoa(int(t)) + ")"
}

// ParseResourceType parses an enum name, case-sensitively.
func ParseResourceType(s string) (ResourceType, error) {
	for t, n := range resourceTypeNames {
		if n == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown resource type %q", s)
}

// Resource is what an ACL protects.
type Resource struct {
	Type ResourceType
	Name string
}

// Cluster is the CLUSTER resource.
func Cluster() Resource { return Resource{Type: ResourceCluster, Name: ClusterName} }

// Database is the DATABASE resource of db.
func Database(db string) Resource { return Resource{Type: ResourceDatabase, Name: db} }

// Table is the TABLE resource of db.table.
func Table(db, table string) Resource { return Resource{Type: ResourceTable, Name: db + "." + table} }

// String renders the resource as Fluss does in error messages.
func (r Resource) String() string {
	return "Resource{type=" + r.Type.String() + ", name='" + r.Name + "'}"
}

// parents are the resources whose ACLs also apply to r: a table's database
// and the cluster; a database's cluster.
func (r Resource) parents() []Resource {
	switch r.Type {
	case ResourceTable:
		db, _, ok := strings.Cut(r.Name, ".")
		if !ok {
			return []Resource{Cluster()}
		}
		return []Resource{Database(db), Cluster()}
	case ResourceDatabase:
		return []Resource{Cluster()}
	}
	return nil
}

// Operation is Fluss's OperationType enum.
type Operation int8

// Operations with Fluss's codes.
const (
	OpAny      Operation = 1
	OpAll      Operation = 2
	OpRead     Operation = 3
	OpWrite    Operation = 4
	OpCreate   Operation = 5
	OpDrop     Operation = 6
	OpAlter    Operation = 7
	OpDescribe Operation = 8
)

var operationNames = map[Operation]string{
	OpAny: "ANY", OpAll: "ALL", OpRead: "READ", OpWrite: "WRITE", OpCreate: "CREATE",
	OpDrop: "DROP", OpAlter: "ALTER", OpDescribe: "DESCRIBE",
}

func (o Operation) String() string {
	if n, ok := operationNames[o]; ok {
		return n
	}
	return "Operation(" + strconv.Itoa(int(o)) + ")"
}

// ParseOperation parses an enum name, case-sensitively.
func ParseOperation(s string) (Operation, error) {
	for o, n := range operationNames {
		if n == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown operation %q", s)
}

// Permission is Fluss's PermissionType enum. Fluss has no DENY.
type Permission int8

// Permissions with Fluss's codes.
const (
	PermAny   Permission = 1
	PermAllow Permission = 2
)

func (p Permission) String() string {
	switch p {
	case PermAny:
		return "ANY"
	case PermAllow:
		return "ALLOW"
	}
	return "Permission(" + strconv.Itoa(int(p)) + ")"
}

// ParsePermission parses an enum name, case-sensitively.
func ParsePermission(s string) (Permission, error) {
	switch s {
	case "ANY":
		return PermAny, nil
	case "ALLOW":
		return PermAllow, nil
	}
	return 0, fmt.Errorf("unknown permission type %q", s)
}

// ACL is one access control entry of a resource.
type ACL struct {
	Principal  Principal
	Permission Permission
	Host       string
	Operation  Operation
}

// HostAddress is the client host string ACLs are matched against: the IP
// address as Java's InetAddress.getHostAddress prints it (IPv6 in full,
// without "::" compression, with the zone after "%"). "" when addr has no
// IP.
func HostAddress(addr net.Addr) string {
	var ip net.IP
	var zone string
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, zone = a.IP, a.Zone
	case *net.UDPAddr:
		ip, zone = a.IP, a.Zone
	case *net.IPAddr:
		ip, zone = a.IP, a.Zone
	default:
		if addr == nil {
			return ""
		}
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return ""
		}
		host, zone, _ = strings.Cut(host, "%")
		ip = net.ParseIP(host)
	}
	if ip == nil {
		return ""
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(ip[i])<<8|uint64(ip[i+1]), 16))
	}
	if zone != "" {
		b.WriteString("%" + zone)
	}
	return b.String()
}
