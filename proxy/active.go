package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// ActiveCoordinatorPath is the znode, under zookeeper.path.root, where the
// leading Fluss coordinator registers itself.
const ActiveCoordinatorPath = "/coordinators/active"

// ActiveCoordinator is the decoded /coordinators/active znode.
type ActiveCoordinator struct {
	Version int
	// ID is the coordinator's id, kept as text whether it was written as a
	// JSON string or number.
	ID string
	// Listeners are the coordinator's endpoints. Version 1 has a single
	// host/port, reported as one listener with an empty name.
	Listeners []config.Listener
}

type activeJSON struct {
	Version   *int            `json:"version"`
	ID        json.RawMessage `json:"id"`
	Host      *string         `json:"host"`
	Port      *int            `json:"port"`
	Listeners *string         `json:"listeners"`
}

// DecodeActiveCoordinator decodes the JSON of /coordinators/active:
// version 1 {"version":1,"id":..,"host":"h","port":p} or version 2
// {"version":2,"id":"1","listeners":"NAME://host:port,..."}.
func DecodeActiveCoordinator(data []byte) (ActiveCoordinator, error) {
	var j activeJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&j); err != nil {
		return ActiveCoordinator{}, fmt.Errorf("active coordinator znode is not valid JSON: %w", err)
	}
	if dec.More() {
		return ActiveCoordinator{}, errors.New("active coordinator znode has data after its JSON object")
	}
	if j.Version == nil {
		return ActiveCoordinator{}, errors.New("active coordinator znode has no version")
	}
	a := ActiveCoordinator{Version: *j.Version}
	if len(j.ID) > 0 && string(j.ID) != "null" {
		var s string
		if err := json.Unmarshal(j.ID, &s); err == nil {
			a.ID = s
		} else {
			var n json.Number
			if err := json.Unmarshal(j.ID, &n); err != nil {
				return ActiveCoordinator{}, fmt.Errorf("active coordinator id %s is neither a string nor a number", j.ID)
			}
			a.ID = n.String()
		}
	}
	switch a.Version {
	case 1:
		if j.Host == nil || j.Port == nil {
			return ActiveCoordinator{}, errors.New("active coordinator znode version 1 needs host and port")
		}
		if *j.Host == "" || *j.Port <= 0 || *j.Port > 65535 {
			return ActiveCoordinator{}, fmt.Errorf("active coordinator znode has invalid address host %q port %d", *j.Host, *j.Port)
		}
		a.Listeners = []config.Listener{{Host: *j.Host, Port: *j.Port}}
	case 2:
		if j.Listeners == nil {
			return ActiveCoordinator{}, errors.New("active coordinator znode version 2 needs listeners")
		}
		ls, err := config.ParseListeners(*j.Listeners)
		if err != nil {
			return ActiveCoordinator{}, fmt.Errorf("active coordinator znode has invalid listeners %q: %w", *j.Listeners, err)
		}
		if len(ls) == 0 {
			return ActiveCoordinator{}, errors.New("active coordinator znode lists no listeners")
		}
		for _, l := range ls {
			if l.Host == "" || l.Port <= 0 || l.Port > 65535 {
				return ActiveCoordinator{}, fmt.Errorf("active coordinator listener %s has invalid address %q", l.Name, l.Address())
			}
		}
		a.Listeners = ls
	default:
		return ActiveCoordinator{}, fmt.Errorf("active coordinator znode has unsupported version %d", a.Version)
	}
	return a, nil
}

// Address returns host:port of the listener named name. An empty name
// picks the first listener. Names compare case-insensitively, as Fluss
// upper-cases them. A version 1 znode has one unnamed address, which any
// name selects.
func (a ActiveCoordinator) Address(name string) (string, error) {
	if len(a.Listeners) == 0 {
		return "", errors.New("active coordinator has no listeners")
	}
	if name == "" || a.Version == 1 {
		return addr(a.Listeners[0]), nil
	}
	names := make([]string, 0, len(a.Listeners))
	for _, l := range a.Listeners {
		if strings.EqualFold(l.Name, name) {
			return addr(l), nil
		}
		names = append(names, l.Name)
	}
	return "", fmt.Errorf("active coordinator %s has no listener %q (it has %s)", a.ID, name, strings.Join(names, ", "))
}

func addr(l config.Listener) string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }
