package proxy

import (
	"fmt"
	"net"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// RewriteRule is the address written into forwarded GET_METADATA answers
// in place of the coordinator's own (deployment (b) in docs/proxy.md).
type RewriteRule struct {
	Host string
	Port int32
}

// Validate reports a rule that cannot be applied.
func (r RewriteRule) Validate() error {
	if r.Host == "" || r.Port <= 0 || r.Port > 65535 {
		return fmt.Errorf("proxy: metadata rewrite needs a host and a port in 1..65535, got %q:%d", r.Host, r.Port)
	}
	return nil
}

// Field numbers of MetadataResponse and PbServerNode (docs/protocol.md §6).
const (
	metadataCoordinatorField protowire.Number = 1
	serverNodeHostField      protowire.Number = 2
	serverNodePortField      protowire.Number = 3
)

// RewriteMetadata returns a MetadataResponse body whose coordinator_server
// has host and port replaced; everything else is copied byte for byte:
// node_id, listeners, rack, tablet_servers, table and partition metadata,
// and fields this version does not know. Only field 1 with the
// length-delimited wire type is treated as coordinator_server (Fluss matches
// full tags); inside it the first host (2, bytes) and port (3, varint) are
// replaced and repeats dropped, and a missing one is appended. A body with
// no coordinator_server is returned unchanged. A body that is not a
// well-formed protobuf message gives an error.
func RewriteMetadata(body []byte, host string, port int32) ([]byte, error) {
	out := make([]byte, 0, len(body)+len(host))
	for b := body; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("metadata response: bad field tag: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, fmt.Errorf("metadata response: bad value of field %d: %w", num, protowire.ParseError(m))
		}
		if num == metadataCoordinatorField && typ == protowire.BytesType {
			node, _ := protowire.ConsumeBytes(b[n:])
			rewritten, err := rewriteServerNode(node, host, port)
			if err != nil {
				return nil, err
			}
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, rewritten)
		} else {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out, nil
}

func rewriteServerNode(node []byte, host string, port int32) ([]byte, error) {
	out := make([]byte, 0, len(node)+len(host))
	var hostDone, portDone bool
	for b := node; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("metadata response: coordinator_server: bad field tag: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, fmt.Errorf("metadata response: coordinator_server: bad value of field %d: %w", num, protowire.ParseError(m))
		}
		switch {
		case num == serverNodeHostField && typ == protowire.BytesType:
			if !hostDone {
				out = appendHost(out, host)
				hostDone = true
			}
		case num == serverNodePortField && typ == protowire.VarintType:
			if !portDone {
				out = appendPort(out, port)
				portDone = true
			}
		default:
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if !hostDone {
		out = appendHost(out, host)
	}
	if !portDone {
		out = appendPort(out, port)
	}
	return out, nil
}

func appendHost(b []byte, host string) []byte {
	b = protowire.AppendTag(b, serverNodeHostField, protowire.BytesType)
	return protowire.AppendString(b, host)
}

// appendPort writes an int32 as protobuf does: sign-extended to 64 bits.
func appendPort(b []byte, port int32) []byte {
	b = protowire.AppendTag(b, serverNodePortField, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(int64(port)))
}

// MetadataCoordinator returns the address a MetadataResponse body names as
// coordinator_server, as host:port. It reads field 1 (length-delimited)
// and, inside it, host (2, bytes) and port (3, varint); every other field
// is stepped over, never decoded. As the protobuf decoder does, repeated
// coordinator_server fields merge, the last host and port win, and a field
// with another wire type than the schema's is ignored. ok is false when the
// body names no coordinator: no coordinator_server, or one without a host
// or a port. A body that is not a well-formed protobuf message gives an
// error.
func MetadataCoordinator(body []byte) (addr string, ok bool, err error) {
	var host string
	var port int32
	var hasHost, hasPort bool
	for b := body; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false, fmt.Errorf("metadata response: bad field tag: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", false, fmt.Errorf("metadata response: bad value of field %d: %w", num, protowire.ParseError(m))
		}
		if num == metadataCoordinatorField && typ == protowire.BytesType {
			node, _ := protowire.ConsumeBytes(b[n:])
			for nb := node; len(nb) > 0; {
				fnum, ftyp, fn := protowire.ConsumeTag(nb)
				if fn < 0 {
					return "", false, fmt.Errorf("metadata response: coordinator_server: bad field tag: %w", protowire.ParseError(fn))
				}
				fm := protowire.ConsumeFieldValue(fnum, ftyp, nb[fn:])
				if fm < 0 {
					return "", false, fmt.Errorf("metadata response: coordinator_server: bad value of field %d: %w", fnum, protowire.ParseError(fm))
				}
				switch {
				case fnum == serverNodeHostField && ftyp == protowire.BytesType:
					v, _ := protowire.ConsumeBytes(nb[fn:])
					host, hasHost = string(v), true
				case fnum == serverNodePortField && ftyp == protowire.VarintType:
					v, _ := protowire.ConsumeVarint(nb[fn:])
					port, hasPort = int32(v), true
				}
				nb = nb[fn+fm:]
			}
		}
		b = b[n+m:]
	}
	if !hasHost || !hasPort {
		return "", false, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port))), true, nil
}
