package runtime

import (
	"context"
	"encoding/json"
	"sync"
)

// MaxIdempotencyKey bounds an Idempotency-Key in bytes; a longer key is
// ignored (the mutation runs unkeyed).
const MaxIdempotencyKey = 128

// maxKeys bounds the remembered keys of one retained task.
const maxKeys = 256

type idemKeyCtx struct{}

// WithIdempotencyKey returns ctx carrying the Idempotency-Key of one
// mutation request, for an owner that passes it to [Runtime.Once].
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKeyCtx{}, key)
}

// IdempotencyKey returns the key [WithIdempotencyKey] stored, or "".
func IdempotencyKey(ctx context.Context) string {
	k, _ := ctx.Value(idemKeyCtx{}).(string)
	return k
}

// keyLog remembers the outcome of each keyed mutation together with the
// retained task: a new retained task (or none after a reset) starts a new
// log, so keys live exactly as long as the task they acted on.
type keyLog struct {
	mu     sync.Mutex // held across a keyed mutation: check and act are one step
	taskID string
	seen   map[string]keyedOutcome
}

type keyedOutcome struct {
	op  string
	res Result
}

// Once runs do, a mutation named op ("submit", "cancel", "reset"), at most
// once per key: a mutation resent with the same key and op returns the
// original result with the current snapshot, and never starts, stops or
// resets twice. An empty or oversized key runs do unkeyed. Keyed mutations
// are serialized; do's error (an unconfirmed reset) is not remembered.
func (r *Runtime) Once(key, op string, do func() (Result, Frame, error)) (Result, Frame, error) {
	if key == "" || len(key) > MaxIdempotencyKey {
		return do()
	}
	l := &r.keys
	l.mu.Lock()
	defer l.mu.Unlock()
	if k, ok := l.seen[key]; ok && k.op == op {
		return k.res, r.Frame(), nil
	}
	res, f, err := do()
	if err != nil {
		return res, f, err
	}
	var snap struct {
		Task *struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	_ = json.Unmarshal(f.JSON, &snap) // our own frame, from do
	id := ""
	if snap.Task != nil {
		id = snap.Task.ID
	}
	if l.seen == nil || id != l.taskID || len(l.seen) >= maxKeys {
		l.seen, l.taskID = map[string]keyedOutcome{}, id
	}
	l.seen[key] = keyedOutcome{op: op, res: res}
	return res, f, nil
}
