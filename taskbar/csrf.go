package taskbar

import "net/http"

// CSRF protection (seed 000 "Remote development access": a session-bound
// check on every mutation, rejected as 422 invalid_csrf). Go has no
// framework session, so the token is bound to a browser cookie
// ([github.com/pikit-dev/pikit/internal/loopback.CSRF]): a random token lives in an HttpOnly, SameSite=Strict
// cookie, the page bootstrap carries the same token (from
// [Handler.CSRFToken]) and the Browser Client sends it as the X-CSRF-Token
// header. A mutation passes only when header and cookie are equal
// (constant-time) and http.CrossOriginProtection accepts the request.
//
// The cookie's Path is "/", not the mount base: page loads must send it
// back so [Handler.CSRFToken] reuses the token. Scoped to the mount, every
// page load minted a new token and broke the mutations of every tab opened
// before it.
const (
	// CSRFCookieName is the cookie holding the token.
	CSRFCookieName = "pi_browser_taskbar_csrf"
	// CSRFHeader is the request header carrying the token.
	CSRFHeader = "X-CSRF-Token"
)

// CSRFToken returns the request's CSRF token for the page bootstrap
// (data-csrf-token), setting a fresh cookie when the request has no valid
// one. Call it before writing the response body. Safe for concurrent use.
func (h *Handler) CSRFToken(w http.ResponseWriter, r *http.Request) string {
	return h.csrf.Token(w, r)
}
