package midcompact

import "sync"

// LockOwner is who holds the planning lock.
type LockOwner string

// The lock owners; LockFree means nobody.
const (
	LockFree  LockOwner = "free"
	LockAgent LockOwner = "agent"
	LockUI    LockOwner = "ui"
)

// PlanningLock is the one runtime mutex over plan edits (seed 001
// §Concurrency; reference §5.4): owner agent or ui. The agent takes it on
// `agent_start` and on every tool call and keeps it until `agent_settled`;
// a planning UI takes it while it is open. Blocked operations are refused,
// never queued. It is never persisted: a reload or branch restore resets it.
// Each owner releases only itself. The zero value is free; safe for
// concurrent use.
type PlanningLock struct {
	mu    sync.Mutex
	owner LockOwner
}

// Owner reports the current owner.
func (l *PlanningLock) Owner() LockOwner {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owner == "" {
		return LockFree
	}
	return l.owner
}

// AcquireAgent gives the lock to the agent; it fails only while a UI holds
// it.
func (l *PlanningLock) AcquireAgent() bool { return l.acquire(LockAgent, LockUI) }

// TryAcquireUI gives the lock to a UI; it fails only while the agent holds
// it (a UI acquiring again succeeds).
func (l *PlanningLock) TryAcquireUI() bool { return l.acquire(LockUI, LockAgent) }

func (l *PlanningLock) acquire(who, blocker LockOwner) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owner == blocker {
		return false
	}
	l.owner = who
	return true
}

// ReleaseAgent frees the lock if the agent holds it.
func (l *PlanningLock) ReleaseAgent() { l.release(LockAgent) }

// ReleaseUI frees the lock if a UI holds it.
func (l *PlanningLock) ReleaseUI() { l.release(LockUI) }

func (l *PlanningLock) release(who LockOwner) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owner == who {
		l.owner = LockFree
	}
}

// Reset frees the lock whoever holds it (session start, tree navigation,
// shutdown, and after commit or abort).
func (l *PlanningLock) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.owner = LockFree
}
