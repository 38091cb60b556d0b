package loopback

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Equal reports whether two secrets are equal, in time that depends only on
// their lengths, never on where they first differ (the loop of
// crypto/subtle.ConstantTimeCompare, on strings so that no copy is made).
func Equal(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := 0; i < len(a); i++ {
		v |= a[i] ^ b[i]
	}
	return subtle.ConstantTimeByteEq(v, 0) == 1
}

// BearerToken returns the token of the request's single
// "Authorization: Bearer <token>" header. It reports false when there is
// no such header, more than one, another scheme, or an empty token.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Values("Authorization")
	if len(h) != 1 {
		return "", false
	}
	tok, ok := strings.CutPrefix(h[0], "Bearer ")
	return tok, ok && tok != ""
}

// Bearer checks a bearer token: the request must carry Token. A server
// with several roles (a page and an agent, say) gives each route class its
// own Bearer, listing the other roles' tokens in Others so that the right
// secret sent to the wrong routes is told apart ([ErrWrongCredential]).
// Every comparison is constant-time, and all of them are made whatever the
// outcome. A Bearer must not be changed once in use; it is then safe for
// concurrent use.
type Bearer struct {
	// Token is the secret this check accepts. Required: an empty Token
	// refuses every request.
	Token string
	// Others are tokens of other roles; nil means none.
	Others []string
}

// Check returns nil when r carries Token, [ErrNoCredential] when it
// carries no bearer token, [ErrWrongCredential] when it carries one of
// Others, and [ErrBadCredential] otherwise.
func (b *Bearer) Check(r *http.Request) error {
	tok, ok := BearerToken(r)
	if !ok {
		return ErrNoCredential
	}
	want := b.Token != "" && Equal(tok, b.Token)
	other := false
	for _, o := range b.Others {
		if o != "" && Equal(tok, o) {
			other = true
		}
	}
	switch {
	case want:
		return nil
	case other:
		return ErrWrongCredential
	default:
		return ErrBadCredential
	}
}

// Handler wraps next: a request without a token, or with a wrong one, gets
// 401 with "WWW-Authenticate: Bearer"; one with another role's token 403.
// Bodies are plain text.
func (b *Bearer) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch err := b.Check(r); err {
		case nil:
			next.ServeHTTP(w, r)
		case ErrWrongCredential:
			http.Error(w, "403 forbidden: wrong credential", http.StatusForbidden)
		default:
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "401 unauthorized", http.StatusUnauthorized)
		}
	})
}
