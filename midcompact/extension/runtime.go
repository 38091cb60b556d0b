package extension

import (
	"context"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// statusKey is the footer status key (reference §3.5).
const statusKey = "midcompact"

// memory is the runtime's last known midcompact state of the current
// session: what the branch said at the last restore, updated by commits and
// plan mutations (reference §1.3 steps 3–4 fall back to it). It is never
// persisted; the session's custom entries are the truth.
type memory struct {
	mu sync.Mutex
	r  midcompact.Restored
	// restored is false until the first restore of this process: a
	// respawned sidecar gets a bind but no session_start.
	restored bool
}

func (m *memory) get() midcompact.Restored {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.r
}

func (m *memory) set(r midcompact.Restored) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r, m.restored = r, true
}

func (m *memory) isRestored() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.restored
}

// setPlan records a transaction's latest plan after a mutation.
func (m *memory) setPlan(tx *midcompact.Transaction, d *midcompact.Draft) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r.Transaction, m.r.Draft = tx, d
}

// committed records a commit: the new state is active, the transaction
// ended.
func (m *memory) committed(s *midcompact.State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r = midcompact.Restored{State: s}
}

// ended clears the transaction (abort), keeping the state.
func (m *memory) ended() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r.Transaction, m.r.Draft = nil, nil
}

// blocks are the committed blocks the context hook projects.
func (m *memory) blocks() []midcompact.Block {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.r.State == nil {
		return nil
	}
	return m.r.State.Blocks
}

// runtime is one sidecar's midcompact: the memory, the planning lock,
// the projector of the context hook and the planning surfaces.
type runtime struct {
	mem      memory
	lock     midcompact.PlanningLock
	proj     projector
	surfaces Surfaces
	now      func() time.Time
}

// restore rebuilds the runtime from the current branch (session_start,
// session_tree): registered workbenches close first, the lock resets, the
// footer shows the restored transaction (seed 001 §Persistence: the lock is
// never persisted).
func (rt *runtime) restore(ctx context.Context, h host) error {
	if err := rt.surfaces.CloseAll(ctx); err != nil {
		return err
	}
	b, err := ownEntries(ctx, h)
	if err != nil {
		return err
	}
	r := midcompact.Restore(b)
	rt.mem.set(r)
	rt.lock.Reset()
	return rt.showStatus(ctx, h)
}

// showStatus sets (or clears) the footer status from memory and the lock.
func (rt *runtime) showStatus(ctx context.Context, h host) error {
	r := rt.mem.get()
	return h.SetStatus(ctx, statusKey, midcompact.FooterStatus(r.Transaction, r.Draft, rt.lock.Owner()))
}

// contextHook answers one `context` event. A sidecar that never restored
// (respawned after a crash: the bridge binds it without a session_start)
// restores first, so projection resumes; a failed restore fails open.
func (rt *runtime) contextHook(ctx context.Context, h host, msgs []piext.Message) *piext.ContextResult {
	if !rt.mem.isRestored() {
		if err := rt.restore(ctx, h); err != nil {
			return nil
		}
	}
	return rt.proj.project(msgs, rt.mem.blocks(), float64(rt.now().UnixMilli()))
}

// contextIdle answers the context hook's Pass: true while no committed
// block is active on the branch, so the bridge sends no transcript and the
// request goes unchanged (seed 001 §Projection: only active blocks are
// projected). A sidecar that never restored restores first, as
// contextHook does; a failed restore passes (the hook would fail open).
func (rt *runtime) contextIdle(ctx context.Context, h host) bool {
	if !rt.mem.isRestored() {
		if err := rt.restore(ctx, h); err != nil {
			return true
		}
	}
	return len(rt.mem.blocks()) == 0
}

// current restores the branch's midcompact state. Commands and surfaces
// act on the branch only; the tool's fallback to memory (reference §1.3)
// is the core's (midcompact.ToolEnv.Memory).
func (rt *runtime) current(ctx context.Context, h host) (midcompact.Restored, error) {
	b, err := ownEntries(ctx, h)
	if err != nil {
		return midcompact.Restored{}, err
	}
	r := midcompact.Restore(b)
	return r, nil
}
