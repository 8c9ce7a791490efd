package zk

// SessionEvent is a change of the client's ZooKeeper session.
type SessionEvent int

const (
	// SessionConnected: the first session, the one Connect waits for.
	SessionConnected SessionEvent = iota
	// SessionDisconnected: the connection to the server was lost; the
	// session may still be alive on the server.
	SessionDisconnected
	// SessionReconnected: the client has a session again after a
	// disconnection, the same one or, after SessionExpired, a new one.
	SessionReconnected
	// SessionExpired: the server expired the session; its ephemeral znodes
	// and watches are gone.
	SessionExpired
)

func (e SessionEvent) String() string {
	switch e {
	case SessionConnected:
		return "connected"
	case SessionDisconnected:
		return "disconnected"
	case SessionReconnected:
		return "reconnected"
	case SessionExpired:
		return "expired"
	}
	return "unknown"
}

// SessionObserver is told about session changes (metrics). It is called on
// go-zookeeper's event goroutine and must not block.
type SessionObserver interface {
	SessionEvent(SessionEvent)
}
