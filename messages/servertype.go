package messages

// ServerType is the server_type of an API_VERSIONS answer: which kind of
// Fluss server answers on the connection. A Java client compares it with
// the kind of node it meant to reach and closes the connection when they
// differ; other clients (fluss-go) refuse an answer without it.
type ServerType int32

// The server types a Fluss server announces; any other value is unknown.
const (
	ServerTypeCoordinator  ServerType = 1
	ServerTypeTabletServer ServerType = 2
)

// String is the type's name as Fluss spells it.
func (t ServerType) String() string {
	switch t {
	case ServerTypeCoordinator:
		return "COORDINATOR"
	case ServerTypeTabletServer:
		return "TABLET_SERVER"
	default:
		return "UNKNOWN"
	}
}

// Int32 is the value for ApiVersionsResponse.ServerType.
func (t ServerType) Int32() *int32 {
	v := int32(t)
	return &v
}
