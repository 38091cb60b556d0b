package taskbar

import (
	"net/http"
	"net/netip"
	"strings"
)

// accessPolicy decides the two access checks of every route and asset
// (seed 000 "Remote development access and diagnostics"). It reads only
// r.Host and r.RemoteAddr, never Forwarded or X-Forwarded-* headers: a
// host behind a trusted proxy sets those two values itself.
type accessPolicy struct {
	allowed map[string]bool // canonical allowed_hosts
}

func newAccessPolicy(hosts []string) accessPolicy {
	p := accessPolicy{allowed: map[string]bool{}}
	for _, h := range hosts {
		canon, err := ParseAllowedHost(h)
		if err != nil {
			panic("taskbar: invalid allowed host in Options (resolve Config first): " + err.Error())
		}
		p.allowed[canon] = true
	}
	return p
}

// allow reports whether the request passes both checks. A loopback peer
// (127.0.0.0/8, ::1 and their IPv4-mapped forms: the Rails definition) may
// use localhost, a valid *.localhost name, 127.0.0.1, ::1 or an allowed
// host; any other peer only an exact allowed host. An unparsable peer or
// host is denied.
func (p accessPolicy) allow(r *http.Request) bool {
	host, ok := normalizeHost(r.Host)
	if !ok {
		return false
	}
	peer, ok := parsePeer(r.RemoteAddr)
	if !ok {
		return false
	}
	if peer.Unmap().IsLoopback() {
		if host == "localhost" || host == "127.0.0.1" || host == "::1" ||
			(strings.HasSuffix(host, ".localhost") && validDNSName(host)) {
			return true
		}
	}
	return len(p.allowed) > 0 && p.allowed[host]
}

// parsePeer reads RemoteAddr as "ip:port" (net/http's form) or a bare IP:
// a host's trusted-proxy middleware may store the client address without
// a port (go-chi/chi#453), and that is the framework's peer value the
// reference §6 says to use. Anything else ("@" of a Unix socket, "") is
// invalid.
func parsePeer(addr string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr(), true
	}
	ip, err := netip.ParseAddr(addr)
	return ip, err == nil
}

// normalizeHost returns the request host without port, lower-case, without
// final dots and with IP literals in canonical spelling.
func normalizeHost(h string) (string, bool) {
	switch {
	case strings.HasPrefix(h, "["):
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", false
		}
		rest := h[end+1:]
		if rest != "" && !validPort(rest) {
			return "", false
		}
		h = h[1:end]
		ip, err := netip.ParseAddr(h)
		if err != nil || ip.Zone() != "" || !ip.Is6() {
			return "", false
		}
		return ip.String(), true
	case strings.Count(h, ":") == 1:
		i := strings.IndexByte(h, ':')
		if !validPort(h[i:]) {
			return "", false
		}
		h = h[:i]
	}
	h = strings.TrimRight(strings.ToLower(h), ".")
	if h == "" {
		return "", false
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" {
			return "", false
		}
		return ip.String(), true
	}
	if !validDNSName(h) {
		return "", false
	}
	return h, true
}

func validPort(s string) bool {
	if len(s) < 2 || s[0] != ':' || len(s) > 6 {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
