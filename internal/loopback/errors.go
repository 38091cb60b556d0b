package loopback

import "errors"

// The guards' decisions. Each Check returns exactly one of these (or nil),
// so callers map them to their own stable codes with errors.Is.
var (
	// ErrHost means the Host header is malformed, or names a host the peer
	// may not use: a DNS-rebinding name, or a remote host not allowed.
	ErrHost = errors.New("loopback: host not allowed")
	// ErrPeer means the peer address (r.RemoteAddr) is unparsable.
	ErrPeer = errors.New("loopback: peer address not allowed")
	// ErrNoCredential means no single "Authorization: Bearer <token>"
	// header with a non-empty token.
	ErrNoCredential = errors.New("loopback: missing bearer token")
	// ErrBadCredential means a bearer token that matches no token.
	ErrBadCredential = errors.New("loopback: wrong bearer token")
	// ErrWrongCredential means the bearer token of another role (see
	// [Bearer.Others]): the right secret sent to the wrong routes.
	ErrWrongCredential = errors.New("loopback: bearer token of another role")
	// ErrCrossOrigin means [http.CrossOriginProtection] refused the request.
	ErrCrossOrigin = errors.New("loopback: cross-origin request")
	// ErrCSRFToken means the CSRF cookie or header is missing, malformed,
	// or the two differ.
	ErrCSRFToken = errors.New("loopback: invalid CSRF token")
)
