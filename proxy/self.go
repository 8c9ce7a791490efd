package proxy

import (
	"context"
	"net"
	"net/netip"
)

// LookupFunc resolves a host name to IP addresses, like
// net.Resolver.LookupHost.
type LookupFunc func(ctx context.Context, host string) ([]string, error)

// selfCheck tells whether an upstream address is this sidecar.
type selfCheck struct {
	self   []string
	lookup LookupFunc
	// localIPs lists this machine's addresses, for self addresses on the
	// unspecified host (0.0.0.0 or ::).
	localIPs func() []netip.Addr
}

func defaultLocalIPs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// isSelf reports whether upstream names one of the sidecar's own
// addresses: same port, and hosts that resolve to a common IP, where every
// loopback address counts as the same host and a self address on the
// unspecified host matches any local IP. Names that do not resolve are
// compared as text.
func (c selfCheck) isSelf(ctx context.Context, upstream string) bool {
	uh, up, err := splitAddr(upstream)
	if err != nil {
		return false
	}
	var uips []netip.Addr
	resolved := false
	for _, s := range c.self {
		sh, sp, err := splitAddr(s)
		if err != nil || sp != up {
			continue
		}
		if sh == uh {
			return true
		}
		if !resolved {
			uips, resolved = c.resolve(ctx, uh), true
		}
		sips := c.resolve(ctx, sh)
		for _, s := range sips {
			if s.IsUnspecified() {
				if c.anyLocal(uips) {
					return true
				}
				continue
			}
			for _, u := range uips {
				if u == s || (u.IsLoopback() && s.IsLoopback()) || u.IsUnspecified() {
					return true
				}
			}
		}
	}
	return false
}

func (c selfCheck) anyLocal(ips []netip.Addr) bool {
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() {
			return true
		}
	}
	var local []netip.Addr
	if c.localIPs != nil {
		local = c.localIPs()
	}
	for _, ip := range ips {
		for _, l := range local {
			if ip == l {
				return true
			}
		}
	}
	return false
}

func (c selfCheck) resolve(ctx context.Context, host string) []netip.Addr {
	if host == "" {
		return []netip.Addr{netip.IPv4Unspecified()}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}
	}
	if c.lookup == nil {
		return nil
	}
	names, err := c.lookup(ctx, host)
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, n := range names {
		if ip, err := netip.ParseAddr(n); err == nil {
			out = append(out, ip.Unmap())
		}
	}
	return out
}
