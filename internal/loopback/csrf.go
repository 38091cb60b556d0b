package loopback

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
)

// CSRFTokenBytes is the entropy of a CSRF token; its text is the unpadded
// base64url encoding, 43 characters.
const CSRFTokenBytes = 32

var csrfTokenLen = base64.RawURLEncoding.EncodedLen(CSRFTokenBytes)

// CSRF checks that a state-changing request comes from a page this server
// gave a token to: a random token lives in an HttpOnly, SameSite=Strict
// cookie, the page carries the same token (from [CSRF.Token]) and sends it
// back in a header; a request passes when [http.CrossOriginProtection]
// accepts it and header and cookie are present, well-formed and equal
// (constant-time). GET, HEAD and OPTIONS always pass, as with
// CrossOriginProtection, so nothing may change state on them.
//
// The cookie's Path is "/": page loads must send it back so Token reuses
// it, or every page load would mint a new token and break the tabs opened
// before. Create it with [NewCSRF]; it is immutable and safe for
// concurrent use.
type CSRF struct {
	cookie, header string
	cop            *http.CrossOriginProtection
}

// NewCSRF returns a check using the named cookie and request header. Empty
// names panic.
func NewCSRF(cookie, header string) *CSRF {
	if cookie == "" || header == "" {
		panic("loopback: CSRF needs a cookie and a header name")
	}
	return &CSRF{cookie: cookie, header: header, cop: http.NewCrossOriginProtection()}
}

// Token returns the request's CSRF token for the page, setting a fresh
// cookie when the request has no well-formed one. Call it before writing
// the response body.
func (c *CSRF) Token(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(c.cookie); err == nil && validCSRFToken(ck.Value) {
		return ck.Value
	}
	var b [CSRFTokenBytes]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name:     c.cookie,
		Value:    tok,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	return tok
}

// Check returns nil for a safe method or a request that passes,
// [ErrCrossOrigin] when the cross-origin check refuses it, and
// [ErrCSRFToken] when the tokens are missing, malformed or differ.
func (c *CSRF) Check(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if c.cop.Check(r) != nil {
		return ErrCrossOrigin
	}
	ck, err := r.Cookie(c.cookie)
	if err != nil || !validCSRFToken(ck.Value) {
		return ErrCSRFToken
	}
	if !Equal(r.Header.Get(c.header), ck.Value) {
		return ErrCSRFToken
	}
	return nil
}

// Handler wraps next: a refused request gets 403 with a plain-text body.
func (c *CSRF) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.Check(r); err != nil {
			http.Error(w, "403 forbidden: invalid CSRF token or cross-origin request", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func validCSRFToken(t string) bool {
	if len(t) != csrfTokenLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(t)
	return err == nil
}

// LimitBody wraps h so that reading more than n bytes of the request body
// fails with an [*http.MaxBytesError] (and the connection is closed after
// the response), as [http.MaxBytesReader] does. Use it when registering a
// route: mux.Handle("POST /tasks", loopback.LimitBody(64<<10, h)). n must
// be positive.
func LimitBody(n int64, h http.Handler) http.Handler {
	if n <= 0 {
		panic("loopback: LimitBody needs a positive limit")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		h.ServeHTTP(w, r)
	})
}
