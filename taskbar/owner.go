package taskbar

import (
	"context"

	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// Owner is the verified Pi owner behind the handler: the project broker
// client ([github.com/pikit-dev/pikit/taskbar/broker.Client]) in a host, or
// an in-process runtime ([InProcess]) in tests. Snapshots are complete
// canonical snapshot JSON. An error means no verified owner answered: the
// handler answers 503 unavailable with the broker-unavailable snapshot,
// never a process-local fallback. A mutation's Idempotency-Key, when the
// request had one, is in ctx ([runtime.IdempotencyKey]): an owner runs a
// keyed mutation at most once ([runtime.Runtime.Once]).
type Owner interface {
	State(ctx context.Context) ([]byte, error)
	Submit(ctx context.Context, prompt, message string) (runtime.Result, []byte, error)
	Cancel(ctx context.Context, taskID string) (runtime.Result, []byte, error)
	Reset(ctx context.Context) (runtime.Result, []byte, error)
}

// InProcess adapts a runtime owned by this process to [Owner] (tests, and
// hosts that want Phoenix-style in-process ownership).
func InProcess(r *runtime.Runtime) Owner { return inProcess{r} }

type inProcess struct{ r *runtime.Runtime }

func (o inProcess) State(context.Context) ([]byte, error) { return o.r.Snapshot(), nil }

func (o inProcess) Submit(ctx context.Context, prompt, message string) (runtime.Result, []byte, error) {
	res, f, _ := o.r.Once(runtime.IdempotencyKey(ctx), "submit", func() (runtime.Result, runtime.Frame, error) {
		res, f := o.r.SubmitFrame(prompt, message)
		return res, f, nil
	})
	return res, f.JSON, nil
}

func (o inProcess) Cancel(ctx context.Context, id string) (runtime.Result, []byte, error) {
	res, f, _ := o.r.Once(runtime.IdempotencyKey(ctx), "cancel", func() (runtime.Result, runtime.Frame, error) {
		res, f := o.r.CancelFrame(id)
		return res, f, nil
	})
	return res, f.JSON, nil
}

func (o inProcess) Reset(ctx context.Context) (runtime.Result, []byte, error) {
	res, f, err := o.r.Once(runtime.IdempotencyKey(ctx), "reset", func() (runtime.Result, runtime.Frame, error) {
		return o.r.ResetFrame(ctx)
	})
	return res, f.JSON, err
}
