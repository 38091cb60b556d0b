package runtime

import (
	"context"
	"errors"

	"github.com/pikit-dev/pikit/pirpc"
)

// piProc is one Pi process driven through [pirpc.Client], with the
// generation that lets the runtime ignore events of a replaced process.
// The runtime's supervisor is its only owner and the only caller of stop.
type piProc struct {
	gen int
	c   *pirpc.Client

	// ctx ends when the process is lost (exit or protocol failure) or
	// stopped; calls on this process derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	lost       chan struct{} // closed once on the first protocol failure or the exit
	readerDone chan struct{} // closed when the event reader returned
	endReason  string        // fixed message; guarded by Runtime.mu, set before lost closes
	endIsExit  bool          // the process exited (not a protocol failure)
}

// protocolMessage maps a pirpc protocol error to its fixed diagnostic.
func protocolMessage(err error) string {
	switch {
	case errors.Is(err, pirpc.ErrOversized):
		return errOversizedRecord
	case errors.Is(err, pirpc.ErrNotObject):
		return errNonObjectRecord
	case errors.Is(err, pirpc.ErrUnterminated):
		return errUnterminatedRecord
	case errors.Is(err, pirpc.ErrUnexpectedResponse):
		return errUnexpectedResponse
	case errors.Is(err, pirpc.ErrInvalidRecord):
		return errMalformedEvent
	default: // ErrMalformedJSON, ErrInvalidUTF8
		return errMalformedRecord
	}
}

// stop ends the process through pirpc's staged Close (stdin closed and
// SIGTERM to the process group at once, then SIGKILL to the group after
// StopWait, reap; see startOnce for the durations), then waits for the
// event reader. ctx bounds the Close; when it ends, pirpc goes to SIGKILL.
func (p *piProc) stop(ctx context.Context) {
	_ = p.c.Close(ctx) // an error means it went to SIGKILL early; it still reaped
	p.cancel()
	<-p.readerDone
}
