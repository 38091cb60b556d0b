package midcompact

import (
	"sync"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// Runtime is the extension's in-memory view of one session (reference
// §3.4, §5.4): the active state (what the `context` hook projects), the
// transaction and plan last seen, the planning lock and the key cache. The
// piext layer keeps one per session and calls its methods from Pi's events;
// nothing here is persisted (the lock in particular: a reload clears it,
// seed 001 §Persistence). Safe for concurrent use.
type Runtime struct {
	// Lock is the planning lock; UIs take it with TryAcquireUI.
	Lock PlanningLock

	mu    sync.Mutex
	state *State
	tx    *Transaction
	draft *Draft
	keys  sessionKeyCache
}

// Restore rebuilds the runtime from the current branch on session_start
// and session_tree (after any workbench was closed): active state,
// transaction and plan as [Restore] finds them, the lock reset.
func (r *Runtime) Restore(branch []pisession.Entry) {
	got := Restore(branch)
	r.mu.Lock()
	r.state, r.tx, r.draft = got.State, got.Transaction, got.Draft
	r.mu.Unlock()
	r.Lock.Reset()
}

// Shutdown forgets everything (session_shutdown).
func (r *Runtime) Shutdown() {
	r.mu.Lock()
	r.state, r.tx, r.draft = nil, nil, nil
	r.keys.Reset()
	r.mu.Unlock()
	r.Lock.Reset()
}

// Memory is the state, transaction and plan the runtime knows.
func (r *Runtime) Memory() Restored {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Restored{State: r.state, Transaction: r.tx, Draft: r.draft}
}

// AgentStart takes the lock for the agent turn when a transaction exists
// (agent_start); AgentSettled releases it (agent_settled).
func (r *Runtime) AgentStart() {
	if r.Memory().Transaction != nil {
		r.Lock.AcquireAgent()
	}
}

// AgentSettled releases the agent's hold on the lock.
func (r *Runtime) AgentSettled() { r.Lock.ReleaseAgent() }

// Tool runs one tool call with env (its Memory and Lock are the
// runtime's) and remembers a transaction and plan the call used or wrote.
// The caller appends res.Draft when set.
func (r *Runtime) Tool(params []byte, env ToolEnv) ToolResult {
	env.Memory, env.Lock = r.Memory(), &r.Lock
	res := Execute(params, &env)
	if res.Transaction != nil {
		r.mu.Lock()
		r.tx = res.Transaction
		if res.Draft != nil {
			r.draft = res.Draft
		}
		r.mu.Unlock()
	}
	return res
}

// Started records a transaction and its empty plan after start appended
// them.
func (r *Runtime) Started(tx *Transaction, d *Draft) {
	r.mu.Lock()
	r.tx, r.draft = tx, d
	r.mu.Unlock()
}

// PlanSaved records a plan a UI appended.
func (r *Runtime) PlanSaved(d *Draft) {
	r.mu.Lock()
	r.draft = d
	r.mu.Unlock()
}

// Committed makes the appended state active and ends the transaction
// (appendEntry emits no event); Aborted ends it without a state. Both free
// the lock.
func (r *Runtime) Committed(s *State) {
	r.mu.Lock()
	r.state, r.tx, r.draft = s, nil, nil
	r.mu.Unlock()
	r.Lock.Reset()
}

// Aborted ends the transaction; nothing was written.
func (r *Runtime) Aborted() {
	r.mu.Lock()
	r.tx, r.draft = nil, nil
	r.mu.Unlock()
	r.Lock.Reset()
}

// Context is the `context` hook: with active blocks, the projected
// messages (changed reports whether anything was replaced); without, the
// hook returns nothing (changed false). nowMs stands in for Date.now().
func (r *Runtime) Context(msgs []Message, nowMs float64) (p Projection, changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil || len(r.state.Blocks) == 0 {
		return Projection{Messages: msgs}, false, nil
	}
	keys, err := r.keys.Keys(msgs)
	if err != nil {
		return Projection{Messages: msgs}, false, err
	}
	p = Project(msgs, keys, r.state.Blocks, nowMs)
	return p, len(p.Applied) > 0, nil
}

// Footer is the `midcompact` status-bar text ("" clears it).
func (r *Runtime) Footer() string {
	m := r.Memory()
	return FooterStatus(m.Transaction, m.Draft, r.Lock.Owner())
}
