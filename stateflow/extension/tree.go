package extension

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// onSessionTree re-reads the mode after a /tree navigation (reference
// §2.10 "Startup, reload, resume, /tree"): the last snapshot entry on the
// new branch supplies the mode and run lifecycle (none: config.json's
// default, as for a new session); memory is never rewound to the branch
// point. The head rebases (the run, the Passive head and the exit handoff
// are dropped). A mode other than Off is recorded in the store (a fork
// made in Off copies its parent's memory then, as a mode command would)
// and the memory validated (unreadable memory under Active blocks, §2.9);
// Off does no store I/O.
func (x *ext) onSessionTree(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	cfg, cfgErr := x.config()
	stored, bootstrap := branchMode(ctx, ev.Pi)
	pol := sf.ResolvePolicy(cfg, cfgErr, stored)
	bootstrap = bootstrap && pol.Mode == sf.ModeActive
	sess.mu.Lock()
	prev, prevBootstrap, start := sess.policy, sess.bootstrap, sess.start
	sess.mu.Unlock()
	var blocked error
	if pol.Err == nil && pol.Mode != sf.ModeOff {
		switch {
		case sess.store == nil:
			blocked = errors.New(sf.MsgRuntimeUnavailable)
		case pol.Mode != prev.Mode || bootstrap != prevBootstrap:
			blocked = x.initSession(ctx, ev.Pi, sess, pol.Mode, bootstrap) // a fork made in Off copies now
		case start != nil:
			blocked = x.startMemory(ctx, ev.Pi, sess, start) // the session start did not complete
		}
		if blocked == nil {
			_, blocked = sess.store.Read(ctx)
		}
	}
	sess.mu.Lock()
	sess.policy, sess.bootstrap, sess.blocked = pol, bootstrap, blocked
	if blocked == nil {
		sess.start = nil // initialized above, or by the pending start
	}
	sess.handoff, sess.passive = false, ""
	sess.run, sess.response, sess.settle = run{}, nil, settle{}
	clear(sess.barrier)
	sess.mu.Unlock()
	x.publishPolicy(ctx, ev.Pi, sess)
	return nil, nil
}

// forkPending is the data of the child-owned "state-flow-passive-stop"
// marker a fork made in Off records (reference §2.2, §2.10 "in Off, record
// only a child-owned forkPending marker and copy later"): ForkPending is
// the parent's session key, Owner the child's.
type forkPending struct {
	At          string `json:"at"`
	Mode        string `json:"mode"`
	Owner       string `json:"owner"`
	ForkPending string `json:"forkPending"`
}

// recordForkPending appends the marker of a fork made in Off; nothing is
// copied and the store is not touched.
func recordForkPending(ctx context.Context, pi *piext.Pi, child, parent string) {
	_ = pi.AppendEntry(ctx, entryPassiveStop, forkPending{
		At: time.Now().UTC().Format(time.RFC3339Nano), Mode: sf.ModeOff, Owner: child, ForkPending: parent,
	})
}

// pendingFork returns the parent key of the last forkPending marker on the
// branch that this session (key) owns, or "".
func pendingFork(es []piext.Entry, key string) string {
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Type() != pimessage.TypeCustom || es[i].CustomType() != entryPassiveStop {
			continue
		}
		var d forkPending
		if strictjson.Unmarshal(es[i].Field("data"), &d, payloadPolicy) != nil || d.ForkPending == "" {
			continue
		}
		if d.Owner == key && store.ValidSessionKey(d.ForkPending) {
			return d.ForkPending
		}
		return ""
	}
	return ""
}

// initSession records mode for a session leaving Off (reference §1.3,
// §2.10): a fork made in Off copies its parent's current memory now (the
// deferred copy); otherwise, or when the child is already occupied or the
// parent never had memory, the session's config is written (an absent
// session initialized empty).
func (x *ext) initSession(ctx context.Context, pi *piext.Pi, sess *session, mode string, bootstrap bool) error {
	if key := sess.store.Layout().SessionKey; key != "" {
		if es, err := getBranch(ctx, pi); err == nil {
			if parent := pendingFork(es, key); parent != "" {
				err := sess.store.Fork(ctx, parent, mode)
				if err != nil && !errors.Is(err, store.ErrChildOccupied) && !errors.Is(err, store.ErrNoSession) {
					return err
				}
			}
		}
	}
	return sess.store.SetMode(ctx, mode, bootstrap)
}

// forkParent returns the session key of the direct parent a fork copies
// from (reference §2.10 "Fork": read the direct parent's header, same CWD,
// matching identity), or "" when the fork is not one StateFlow follows:
// the child's header must name parentFile as its parentSession, and the
// parent file's header line must be a session of the same cwd whose id is
// the one its key carries. Cross-CWD and in-memory parents are not
// followed (the child starts as a new session).
func forkParent(ctx context.Context, pi *piext.Pi, cwd, parentFile string) string {
	raw, err := pi.GetHeader(ctx)
	if err != nil {
		return ""
	}
	if parent, ok := parentSessionOf(raw); !ok || parent != parentFile {
		return ""
	}
	key := strings.TrimSuffix(filepath.Base(parentFile), ".jsonl")
	id, ok := store.SessionID(key)
	if !ok {
		return ""
	}
	h, err := readHeader(parentFile)
	if err != nil || h.Type != pimessage.TypeSession || h.Cwd != cwd || h.ID != id {
		return ""
	}
	return key
}

// parentSessionOf reads parentSession ("" when absent) of the header Pi's
// getHeader() answers, read strictly; ok is false when it does not decode.
func parentSessionOf(header []byte) (parent string, ok bool) {
	var h struct {
		ParentSession string `json:"parentSession"`
	}
	if strictjson.Unmarshal(header, &h, payloadPolicy) != nil {
		return "", false
	}
	return h.ParentSession, true
}

// sessionHeader is what forkParent needs of a Pi session file's header.
type sessionHeader struct {
	Type string // pimessage.TypeSession
	ID   string
	Cwd  string
}

// maxHeader bounds the header line read from a parent session file.
const maxHeader = 64 << 10

// readHeader reads the header of the session file at path as Pi does
// (pisession.ReadHeader: names exact; lines Pi skips before it skipped).
// Errors: the file's, or pisession's for a file that is not a session.
func readHeader(path string) (sessionHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return sessionHeader{}, err
	}
	defer f.Close()
	h, err := pisession.ReadHeader(f, &pisession.Options{MaxRecord: maxHeader})
	if err != nil {
		return sessionHeader{}, err
	}
	return sessionHeader{Type: pimessage.TypeSession, ID: h.ID, Cwd: h.Cwd}, nil
}
