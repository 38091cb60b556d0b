package taskbar

import "net/http"

// Allowed reports whether r passes the access check every taskbar route
// applies (r.Host and r.RemoteAddr only; seed 000 "Remote development
// access and diagnostics"). Hosts and the proxy
// call it before injecting the page bootstrap, so a refused client gets
// neither the bootstrap nor a CSRF cookie: it could not use either. Safe
// for concurrent use.
func (h *Handler) Allowed(r *http.Request) bool { return h.access.Check(r) == nil }
