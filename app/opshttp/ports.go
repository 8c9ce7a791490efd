package opshttp

import (
	"fmt"
	"strconv"
	"strings"
)

// maxPorts bounds how many ports one setting may name, so a setting such as
// "1-65535" is still tried in bounded time.
const maxPorts = 65536

// ParsePorts reads a port setting as Fluss documents it for
// metrics.reporter.prometheus.port: one port ("9249"), a range
// ("9250-9260"), or a comma-separated list of both ("9249,9250-9260").
// Ports are tried in the order written. 0 asks the system for a free port.
func ParsePorts(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no port given")
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := parsePort(lo)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		to := from
		if isRange {
			if to, err = parsePort(hi); err != nil {
				return nil, fmt.Errorf("%q: %w", part, err)
			}
			if to < from {
				return nil, fmt.Errorf("%q: the range ends before it starts", part)
			}
		}
		if len(out)+(to-from+1) > maxPorts {
			return nil, fmt.Errorf("%q: more than %d ports", s, maxPorts)
		}
		for p := from; p <= to; p++ {
			out = append(out, p)
		}
	}
	return out, nil
}

func parsePort(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty port")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
	}
	p, err := strconv.Atoi(s)
	if err != nil || p > 65535 {
		return 0, fmt.Errorf("port %q is outside 0-65535", s)
	}
	return p, nil
}
