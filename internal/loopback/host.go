package loopback

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
)

// ErrAllowedHost is returned by [ParseAllowedHost] and [NewHostGuard] for
// an entry that is not an exact DNS name or IP address.
var ErrAllowedHost = errors.New("loopback: allowed host must be an exact DNS name or IP address")

// HostGuard decides whether a request's Host header and peer address may
// reach a local server (the defence against DNS rebinding). It reads only
// r.Host and r.RemoteAddr, never Forwarded or X-Forwarded-* headers: a
// server behind a trusted proxy sets those two values itself.
//
// A loopback peer (127.0.0.0/8, ::1 and their IPv4-mapped forms) may use
// localhost, a valid *.localhost name, 127.0.0.1, ::1 (any port, final dots
// and letter case ignored) or an allowed host; any other peer only an
// allowed host. The zero HostGuard allows loopback names only. It is
// immutable and safe for concurrent use.
type HostGuard struct {
	allowed map[string]bool // canonical names and addresses
}

// NewHostGuard returns a guard that also allows the given hosts (exact DNS
// names or IP literals, no ports; see [ParseAllowedHost]) from any peer.
// Nil or empty allows loopback names only. An invalid entry is an error
// wrapping [ErrAllowedHost].
func NewHostGuard(allowed []string) (*HostGuard, error) {
	g := &HostGuard{}
	for _, h := range allowed {
		canon, err := ParseAllowedHost(h)
		if err != nil {
			return nil, err
		}
		if g.allowed == nil {
			g.allowed = make(map[string]bool, len(allowed))
		}
		g.allowed[canon] = true
	}
	return g, nil
}

// Remote reports whether any host beyond loopback is allowed.
func (g *HostGuard) Remote() bool { return len(g.allowed) > 0 }

// Check returns nil when r may pass, [ErrPeer] for an unparsable peer
// address and [ErrHost] for a Host the peer may not use (or a malformed
// one).
func (g *HostGuard) Check(r *http.Request) error {
	host, ok := NormalizeHost(r.Host)
	if !ok {
		return ErrHost
	}
	peer, ok := parsePeer(r.RemoteAddr)
	if !ok {
		return ErrPeer
	}
	if peer.Unmap().IsLoopback() && isLoopbackName(host) {
		return nil
	}
	if g.allowed[host] {
		return nil
	}
	return ErrHost
}

// Handler wraps next: a refused request gets 403 with a plain-text body.
func (g *HostGuard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			http.Error(w, "403 forbidden: "+strings.TrimPrefix(err.Error(), "loopback: "), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackName reports whether a normalized host names this machine in a
// way no DNS answer can rebind.
func isLoopbackName(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" ||
		(strings.HasSuffix(host, ".localhost") && validDNSName(host))
}

// parsePeer reads RemoteAddr as "ip:port" (net/http's form) or a bare IP:
// a trusted-proxy middleware may store the client address without a port.
// Anything else ("@" of a Unix socket, "") is invalid.
func parsePeer(addr string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr(), true
	}
	ip, err := netip.ParseAddr(addr)
	return ip, err == nil
}

// NormalizeHost returns a Host header value without its port, lower-case,
// without final dots and with IP literals in canonical spelling
// ("[::1]:80" → "::1", "LocalHost.:8080" → "localhost"). It reports false
// for an empty or malformed host, a bad port, a zoned address, or a DNS
// name whose last label is a number.
func NormalizeHost(h string) (string, bool) {
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
		ip, err := netip.ParseAddr(h[1:end])
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

// validPort reports whether s is ":" followed by one to five digits.
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

// ParseAllowedHost validates one allowed-host entry and returns its
// canonical spelling: trimmed, lower-case, final dots removed, IP literals
// in canonical form. Ports, schemes, paths, wildcards, CIDR, bracketed or
// scoped IP literals, empty entries and names whose last label is a number
// (2130706433, 0x7f.1: browsers read those as IPv4 addresses) are an error
// wrapping [ErrAllowedHost] that does not quote the entry.
func ParseAllowedHost(entry string) (string, error) {
	h := strings.TrimRight(strings.ToLower(strings.TrimSpace(entry)), ".")
	if h == "" || strings.ContainsAny(h, "%/[]") {
		return "", ErrAllowedHost
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.String(), nil
	}
	if !validDNSName(h) {
		return "", ErrAllowedHost
	}
	return h, nil
}

// validDNSName reports whether h (lower-case, no final dot) is a DNS name
// of LDH labels whose last label does not "end in a number": browsers parse
// such a host (2130706433, 0x7f.1, 127.000.000.001, 127.1) as an IPv4
// address (WHATWG URL host parser) and send its dotted-decimal form, so as
// a name it could never match, and as an address it is not canonical.
func validDNSName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	last := h
	for rest := h; ; {
		label, after, more := strings.Cut(rest, ".")
		if !ldhLabel(label) {
			return false
		}
		if !more {
			last = label
			break
		}
		rest = after
	}
	return !endsInNumber(last)
}

// ldhLabel reports whether l is 1 to 63 of [a-z0-9-], not starting or
// ending with a hyphen.
func ldhLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// endsInNumber is the WHATWG URL "ends in a number" test on the last label:
// all decimal digits, or 0x/0X followed by hex digits.
func endsInNumber(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}
