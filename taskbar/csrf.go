package taskbar

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// CSRF protection (seed 000 "Remote development access": a session-bound
// check on every mutation, rejected as 422 invalid_csrf). Go has no
// framework session, so the token is bound to a browser cookie: a random
// token lives in an HttpOnly, SameSite=Strict cookie, the page bootstrap
// carries the same token (from
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
	CSRFHeader     = "X-CSRF-Token"
	csrfTokenBytes = 32
)

var csrfTokenLen = base64.RawURLEncoding.EncodedLen(csrfTokenBytes)

func validTokenShape(t string) bool {
	if len(t) != csrfTokenLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(t)
	return err == nil
}

// CSRFToken returns the request's CSRF token for the page bootstrap
// (data-csrf-token), setting a fresh cookie when the request has no valid
// one. Call it before writing the response body. Safe for concurrent use.
func (h *Handler) CSRFToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(CSRFCookieName); err == nil && validTokenShape(c.Value) {
		return c.Value
	}
	var b [csrfTokenBytes]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name:     CSRFCookieName,
		Value:    tok,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	return tok
}

// checkCSRF decides a mutation: the cross-origin check, then header and
// cookie tokens present, well-formed and equal.
func (h *Handler) checkCSRF(r *http.Request) bool {
	if h.cop.Check(r) != nil {
		return false
	}
	c, err := r.Cookie(CSRFCookieName)
	if err != nil || !validTokenShape(c.Value) {
		return false
	}
	hdr := r.Header.Get(CSRFHeader)
	return len(hdr) == len(c.Value) && subtle.ConstantTimeCompare([]byte(hdr), []byte(c.Value)) == 1
}
