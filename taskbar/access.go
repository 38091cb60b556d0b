package taskbar

import (
	"errors"
	"net/http"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// The access and CSRF checks of every route and asset (seed 000 "Remote
// development access and diagnostics") are the loopback guards: the
// Host/peer guard reads only r.Host and r.RemoteAddr, never Forwarded or
// X-Forwarded-* headers (a host behind a trusted proxy sets those two
// values itself). A loopback peer (127.0.0.0/8, ::1 and their IPv4-mapped
// forms: the Rails definition) may use localhost, a valid *.localhost
// name, 127.0.0.1, ::1 or an allowed host; any other peer only an exact
// allowed host. An unparsable peer or host is denied.

// newHostGuard builds the access check from resolved allowed_hosts; an
// invalid entry is a programmer error (Options must hold resolved
// [Settings]).
func newHostGuard(hosts []string) *loopback.HostGuard {
	g, err := loopback.NewHostGuard(hosts)
	if err != nil {
		panic("taskbar: invalid allowed host in Options (resolve Config first): " + err.Error())
	}
	return g
}

// guardStatus is the edge table of the guards' decisions: the status and
// stable code each refusal is answered with (seed 000 table). The access
// refusals, and any refusal the table does not name, are 403 forbidden.
func guardStatus(err error) (int, string) {
	switch {
	case errors.Is(err, loopback.ErrCrossOrigin), errors.Is(err, loopback.ErrCSRFToken):
		return http.StatusUnprocessableEntity, CodeInvalidCSRF
	default: // loopback.ErrHost, loopback.ErrPeer
		return http.StatusForbidden, CodeForbidden
	}
}
