package extension

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// Native checkpoint entry types (reference §2.2 "Pi native session
// entries").
const (
	entrySnapshot    = "state-flow-snapshot"
	entryPassiveStop = "state-flow-passive-stop"
)

// statusKey is the footer status key; the text is "state-flow active",
// "state-flow passive" or "state-flow active (blocked)" (reference §1.3).
const statusKey = "state-flow"

// session is the StateFlow state of one bound Pi session (one generation).
// The store is the memory; the fields under mu are per-process lifecycle:
// the mode, the current run's specification and frozen head, the barrier
// decisions and the armed response.
type session struct {
	gen   uint64
	store *store.Store // nil when the session has no key in reach

	mu        sync.Mutex
	policy    sf.Policy
	bootstrap bool
	blocked   error // unreadable memory under Active (reference §2.9)
	// start is the memory initialization session_start could not
	// complete (nil: none pending); recoverMemory retries it.
	start    *memoryStart
	handoff  bool // left Active: the exit handoff replaces the Passive head
	run      run
	passive  string // frozen Passive head or handoff ("" = compute)
	barrier  map[string]string
	response *string   // armed final answer of the current run
	settle   settle    // what agent_settled does about the run just ended
	arts     artifacts // artifact sources and Skills (artifacts.go)
}

// run is the current Active run: its specification, the anchor (the
// timestamp of its first user message, raw JSON) and the frozen head.
type run struct {
	pending bool // before_agent_start seen, first context not yet
	spec    string
	anchor  json.RawMessage
	head    [2]string
	headMsg piext.Message // head as the user message injected first
	started bool
	seen    seen     // the memory the model has been shown in this run
	notices []notice // tail notices in run order
}

func (s *session) snapshotPolicy() (sf.Policy, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy, s.bootstrap
}

// sessionFor returns the state of the session a call belongs to, attaching
// it when the sidecar has not seen that generation yet (a respawn sends no
// session_start).
func (x *ext) sessionFor(ctx context.Context, s piext.Session, pi *piext.Pi) *session {
	x.mu.Lock()
	cur := x.cur
	x.mu.Unlock()
	if cur != nil && cur.gen == s.Generation {
		return cur
	}
	return x.attach(ctx, s, pi, "respawn", "")
}

// attach binds a session (reference §2.10): the mode from the branch's last
// snapshot entry, else config.json's default (a new session, initialized in
// the store unless Off); a fork copies the parent's current memory; Off does
// no store I/O.
func (x *ext) attach(ctx context.Context, s piext.Session, pi *piext.Pi, reason, parentFile string) *session {
	cfg, cfgErr := x.config()
	sess := &session{gen: s.Generation, barrier: map[string]string{}}
	if key := sessionKey(s); key != "" && s.Cwd != "" {
		if l, err := store.NewLayout(x.root(), s.Cwd, key); err == nil {
			var diag *store.Diagnostics
			if cfg.Logging {
				diag = store.NewDiagnostics(x.agentDir)
			}
			sess.store = store.Open(l, &store.Options{Roots: x.roots, HistoryLimit: cfg.HistoryLimit, NewSessionMode: cfg.Mode, Diagnostics: diag, Catalog: x.catalogSource()})
		}
	}
	stored, bootstrap := branchMode(ctx, pi)
	sess.policy = sf.ResolvePolicy(cfg, cfgErr, stored)
	sess.bootstrap = bootstrap && sess.policy.Mode == sf.ModeActive
	parent := ""
	if reason == "fork" && parentFile != "" && stored != "" {
		parent = forkParent(ctx, pi, s.Cwd, parentFile)
	}
	if sess.policy.Err == nil && sess.policy.Mode == sf.ModeOff && parent != "" && sess.store != nil {
		// Off copies nothing: a child-owned marker defers the copy to the
		// first mode command that leaves Off (reference §2.10).
		recordForkPending(ctx, pi, sess.store.Layout().SessionKey, parent)
	}
	if sess.policy.Mode != sf.ModeOff {
		start := &memoryStart{stored: stored, parent: parent}
		if err := x.startMemory(ctx, pi, sess, start); err != nil {
			// Retried before the memory is next read (recoverMemory): a
			// start cut short (the hook's time ran out while another writer
			// held the store lock, or the store failed) must not leave the
			// session without its memory for good.
			sess.blocked, sess.start = err, start
		} else if _, err := sess.store.Read(ctx); err != nil {
			sess.blocked = err
		}
	}
	x.mu.Lock()
	if x.cur == nil || x.cur.gen <= sess.gen {
		x.cur = sess
	}
	x.mu.Unlock()
	x.publishPolicy(ctx, pi, sess)
	return sess
}

// memoryStart is what attach initializes in the store for a session not in
// Off: a fork's copy of its parent's memory (parent), a new session's
// record (stored == ""), or nothing for a session that has its snapshot.
type memoryStart struct{ stored, parent string }

// startMemory initializes the session's memory as attach decided (st),
// under the store lock, with no deadline of its own: a fork copies its
// parent's current memory (a parent without memory: a new session), a new
// session is recorded with its mode (and the mode entry appended on the
// branch).
func (x *ext) startMemory(ctx context.Context, pi *piext.Pi, sess *session, st *memoryStart) error {
	sess.mu.Lock()
	mode := sess.policy.Mode
	sess.mu.Unlock()
	switch {
	case sess.store == nil:
		return errors.New(sf.MsgRuntimeUnavailable)
	case st.parent != "":
		err := sess.store.Fork(ctx, st.parent, mode)
		if errors.Is(err, store.ErrNoSession) {
			err = sess.store.SetMode(ctx, mode, false) // the parent never had memory
		}
		if err != nil && !errors.Is(err, store.ErrChildOccupied) {
			return err
		}
	case st.stored == "":
		if err := sess.store.SetMode(ctx, mode, false); err != nil {
			return err
		}
		_ = pi.AppendEntry(ctx, entrySnapshot, map[string]any{"mode": mode})
	}
	return nil
}

// recoverMemory tries to leave the blocked state: it completes a pending
// start, then reads the memory; on success the session is unblocked and
// the policy republished. It returns the error that keeps it blocked (nil
// when it was not blocked).
func (x *ext) recoverMemory(ctx context.Context, sess *session, pi *piext.Pi) error {
	sess.mu.Lock()
	blocked, start := sess.blocked, sess.start
	sess.mu.Unlock()
	if blocked == nil {
		return nil
	}
	if sess.store == nil {
		return blocked
	}
	if start != nil {
		if err := x.startMemory(ctx, pi, sess, start); err != nil {
			return err
		}
		sess.mu.Lock()
		if sess.start == start {
			sess.start = nil
		}
		sess.mu.Unlock()
	}
	if _, err := sess.store.Read(ctx); err != nil {
		return err
	}
	sess.mu.Lock()
	sess.blocked = nil
	sess.mu.Unlock()
	x.publishPolicy(ctx, pi, sess)
	return nil
}

// sessionKey is the session file's basename without ".jsonl", or the
// session id without a file (reference §2.1).
func sessionKey(s piext.Session) string {
	if s.File != "" {
		return strings.TrimSuffix(filepath.Base(s.File), ".jsonl")
	}
	return s.ID
}

// branchMode reads the mode (and bootstrap) of the last snapshot entry on
// the branch; "" when there is none (a new session).
func branchMode(ctx context.Context, pi *piext.Pi) (string, bool) {
	es, err := getBranch(ctx, pi)
	if err != nil {
		return "", false
	}
	return modeOf(es)
}

// modeOf finds the last snapshot entry of es that names a mode; a legacy
// {disabled:true} reads as Off. Malformed entries are skipped.
func modeOf(es []piext.Entry) (string, bool) {
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Type() != pimessage.TypeCustom || es[i].CustomType() != entrySnapshot {
			continue
		}
		var d struct {
			Mode      string `json:"mode"`
			Bootstrap bool   `json:"bootstrap"`
			Disabled  bool   `json:"disabled"`
		}
		if strictjson.Unmarshal(es[i].Field("data"), &d, payloadPolicy) != nil {
			continue
		}
		switch {
		case d.Mode == sf.ModeActive || d.Mode == sf.ModePassive || d.Mode == sf.ModeOff:
			return d.Mode, d.Bootstrap
		case d.Disabled:
			return sf.ModeOff, false
		}
	}
	return "", false
}

// hasConversation reports whether the branch already holds a message (a
// mode selected inside an existing conversation bootstraps, reference §1.2).
func hasConversation(ctx context.Context, pi *piext.Pi) bool {
	es, err := getBranch(ctx, pi)
	if err != nil {
		return false
	}
	for _, e := range es {
		if e.Type() == pimessage.TypeMessage {
			return true
		}
	}
	return false
}

// getBranch returns the entries root → leaf. It decodes Pi's answer itself:
// piext.Pi.GetBranch unmarshals each entry object into Entry{Raw}, which
// leaves Raw empty.
func getBranch(ctx context.Context, pi *piext.Pi) ([]piext.Entry, error) {
	raw, err := pi.Call(ctx, "session", "getBranch")
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	// Splitting the array matches no member names; each entry is read by
	// pimessage's accessors.
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	es := make([]piext.Entry, len(list))
	for i, r := range list {
		es[i] = piext.Entry{Raw: r}
	}
	return es, nil
}

// publishPolicy shows the mode in the footer and exposes the tools only in
// Active and Passive (reference §1.2, §1.3).
func (x *ext) publishPolicy(ctx context.Context, pi *piext.Pi, s *session) {
	s.mu.Lock()
	p, blocked := s.policy, s.blocked
	s.mu.Unlock()
	status := ""
	if p.Err == nil && p.Mode != sf.ModeOff {
		status = "state-flow " + p.Mode
		if blocked != nil && p.Mode == sf.ModeActive {
			status += " (blocked)"
		}
	}
	_ = pi.SetStatus(ctx, statusKey, status)
	active, err := pi.GetActiveTools(ctx)
	if err != nil {
		return
	}
	next := make([]string, 0, len(active)+2)
	for _, n := range active {
		if n != sf.ToolPatchState && n != sf.ToolReadState {
			next = append(next, n)
		}
	}
	if p.ToolsExposed() {
		next = append(next, sf.ToolReadState, sf.ToolPatchState)
	}
	if !sameSet(active, next) {
		_ = pi.SetActiveTools(ctx, next)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := make(map[string]bool, len(a))
	for _, n := range a {
		seen[n] = true
	}
	for _, n := range b {
		if !seen[n] {
			return false
		}
	}
	return true
}

func (x *ext) onSessionStart(ctx context.Context, ev *piext.Event, p piext.SessionStartEvent) (any, error) {
	x.attach(ctx, ev.Session, ev.Pi, p.Reason, p.PreviousSessionFile)
	return nil, nil
}
