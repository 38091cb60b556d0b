package extension

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// onBeforeAgentStart, in Active, captures the prompt as the run's
// specification without a storage write (reference §1.12 step 1). The
// state_flow system-prompt section is set at context_with_system on the
// request's system message (system.go), not by replacing the prompt here:
// a Go hook cannot edit before_agent_start's systemPromptOptions in place,
// and returning a whole systemPrompt would make Pi's prompt opaque and
// drop every other section's structure.
func (x *ext) onBeforeAgentStart(ctx context.Context, ev *piext.Event, p piext.BeforeAgentStartEvent) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	sess.mu.Lock()
	pol := sess.policy
	if pol.Err == nil && pol.Mode == sf.ModePassive && !sess.handoff {
		sess.passive = "" // the Passive head rebases once per run
	}
	if pol.Err == nil && pol.Mode == sf.ModeActive {
		sess.run = run{pending: true, spec: p.Prompt}
		sess.response = nil
		clear(sess.barrier)
	}
	sess.mu.Unlock()
	return nil, nil
}

// onContext projects the conversation for one LLM call (reference §1.11):
// Active puts the frozen runtime-context head first and keeps only the
// current run (plus foreign custom messages), unless bootstrapping; Passive
// puts the passive head (or the exit handoff) first and keeps everything.
func (x *ext) onContext(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	pol, _ := sess.snapshotPolicy()
	if pol.Err != nil || pol.Mode == sf.ModeOff || sess.store == nil {
		return nil, nil
	}
	if pol.Mode == sf.ModePassive {
		return x.passiveContext(ctx, sess, ev.Pi, ev.Messages)
	}
	return x.activeContext(ctx, sess, ev)
}

func (x *ext) passiveContext(ctx context.Context, sess *session, pi *piext.Pi, msgs []piext.Message) (any, error) {
	if x.recoverMemory(ctx, sess, pi) != nil {
		return nil, nil // Passive injects only once a validated memory view exists
	}
	sess.mu.Lock()
	text, handoff := sess.passive, sess.handoff
	sess.mu.Unlock()
	if text == "" {
		var err error
		if handoff {
			text, err = x.exitHandoff(ctx, sess.store)
		} else {
			text, err = sess.store.PassiveHead(ctx)
		}
		if err != nil {
			return nil, nil
		}
		sess.mu.Lock()
		sess.passive = text
		sess.mu.Unlock()
	}
	head, err := userMessage(nil, text)
	if err != nil {
		return nil, err
	}
	return &piext.ContextResult{Messages: append([]piext.Message{head}, msgs...)}, nil
}

// exitHandoff is {state, continuation} with the latest accepted response
// as the continuation.
func (x *ext) exitHandoff(ctx context.Context, st *store.Store) (string, error) {
	snap, err := st.Read(ctx)
	if err != nil {
		return "", err
	}
	eff, err := snap.View.EffectiveAt(0)
	if err != nil {
		return "", err
	}
	cont, _ := eff[sf.PlaneResponse].(string)
	return sf.ExitHandoff(x.roots, eff, cont)
}

func (x *ext) activeContext(ctx context.Context, sess *session, ev *piext.Event) (any, error) {
	msgs := ev.Messages
	sess.mu.Lock()
	r, bootstrap, blocked := sess.run, sess.bootstrap, sess.blocked
	sess.mu.Unlock()
	if blocked != nil {
		// Blocked until repaired (or Passive/Off selected): Pi would
		// swallow a hook error, so the run is aborted (reference §1.12
		// step 2, §2.9).
		if err := x.recoverMemory(ctx, sess, ev.Pi); err != nil {
			_ = ev.Pi.Abort(ctx)
			return nil, nil
		}
	}
	if !r.started {
		// The first context of a run (or the first after a native
		// compaction rebased the head): publish the specification, anchor
		// the run at its first user message, freeze the head.
		starting := r.pending
		if err := x.prepareRun(ctx, sess, ev.Pi, r.spec, r.pending); err != nil {
			x.block(ctx, sess, ev.Pi, err)
			return nil, nil
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role() == pimessage.RoleUser {
				r.anchor = msgs[i].Field("timestamp")
				break
			}
		}
		snap, err := x.freezeHead(ctx, sess, &r)
		if err != nil {
			x.block(ctx, sess, ev.Pi, err)
			return nil, nil
		}
		sess.mu.Lock()
		sess.run = r
		sess.mu.Unlock()
		if starting && (r.spec != "" || bootstrap) {
			// The run's native checkpoint entry: mode and run lifecycle
			// (reference §2.2 "state-flow-snapshot"); turn_end's entry
			// completes it.
			_ = ev.Pi.AppendEntry(ctx, entrySnapshot, snapshotData(snap, sf.ModeActive, bootstrap, r.spec))
		}
	} else if err := x.noticeDrift(ctx, sess, msgs); err != nil {
		x.block(ctx, sess, ev.Pi, err)
		return nil, nil
	} else if err := x.noticeArtifacts(ctx, sess, msgs); err != nil {
		x.block(ctx, sess, ev.Pi, err)
		return nil, nil
	}
	sess.mu.Lock()
	r = sess.run
	sess.mu.Unlock()
	return &piext.ContextResult{Messages: project(&r, msgs, bootstrap)}, nil
}

// project is the Active context of one LLM call: the frozen head, then
// every foreign custom message before the run, then the run with its tail
// notices at the positions where they first appeared. Bootstrap, or an
// anchor that cannot be found, keeps every message.
func project(r *run, msgs []piext.Message, bootstrap bool) []piext.Message {
	out := []piext.Message{r.headMsg}
	at := anchorIndex(msgs, r.anchor)
	if bootstrap || at < 0 {
		at = 0
	}
	n := 0 // notices placed
	for i, m := range msgs {
		if i < at {
			if isCustom(m) {
				out = append(out, m)
			}
			continue
		}
		for n < len(r.notices) && r.notices[n].after <= i-at {
			out = append(out, r.notices[n].msg)
			n++
		}
		out = append(out, m)
	}
	for ; n < len(r.notices); n++ {
		out = append(out, r.notices[n].msg)
	}
	return out
}

// block marks Active memory unreadable (status "active (blocked)") and
// aborts the run.
func (x *ext) block(ctx context.Context, sess *session, pi *piext.Pi, err error) {
	sess.mu.Lock()
	sess.blocked = err
	sess.mu.Unlock()
	x.publishPolicy(ctx, pi, sess)
	_ = pi.Abort(ctx)
}

// anchorIndex is the index of the user message with the anchor's
// timestamp, or -1 when it is uncertain (then everything is kept). The run
// is at the end, so the search goes backwards, and only messages whose
// bytes hold the anchor are decoded.
func anchorIndex(msgs []piext.Message, anchor json.RawMessage) int {
	if len(anchor) == 0 {
		return -1
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if bytes.Contains(m.Raw, anchor) && m.Role() == pimessage.RoleUser && bytes.Equal(m.Field("timestamp"), anchor) {
			return i
		}
	}
	return -1
}

// isCustom reports whether m is a custom message (kept by the Active
// projection, reference §1.11); only messages whose bytes mention
// "custom" are decoded.
func isCustom(m piext.Message) bool {
	return bytes.Contains(m.Raw, []byte(`"`+pimessage.RoleCustom+`"`)) && m.Role() == pimessage.RoleCustom
}

// userMessage is a synthetic user message of text blocks (user-level data,
// reference §1.6, §1.11) with the given timestamp (now when nil).
func userMessage(ts json.RawMessage, texts ...string) (piext.Message, error) {
	content := make([]piext.Content, len(texts))
	for i, t := range texts {
		content[i] = piext.Text(t)
	}
	if ts == nil {
		ts = json.RawMessage(fmt.Sprint(time.Now().UnixMilli()))
	}
	raw, err := json.Marshal(struct {
		Role      string          `json:"role"`
		Content   []piext.Content `json:"content"`
		Timestamp json.RawMessage `json:"timestamp"`
	}{pimessage.RoleUser, content, ts})
	return piext.NewMessage(raw), err
}

// onMessageEnd decides the Active barrier for an assistant message's tool
// calls, or arms response reconciliation for a final answer (reference
// §1.7 "Barrier", §1.12 step 4).
func (x *ext) onMessageEnd(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	a, ok := decodeAssistant(ev.Payload)
	if !ok {
		return nil, nil
	}
	ids, names, text := a.ids, a.names, a.text
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.policy.Err != nil || sess.policy.Mode != sf.ModeActive {
		return nil, nil
	}
	for i, reason := range sf.Barrier(names) {
		if reason != "" {
			sess.barrier[ids[i]] = reason
		}
	}
	if len(ids) == 0 && a.stop != "aborted" && a.stop != "error" {
		sess.response = &text
	}
	return nil, nil
}

// payloadPolicy reads invalid UTF-8 in a hook payload as U+FFFD, as
// JSON.parse does.
var payloadPolicy = &strictjson.Policy{AllowInvalidUTF8: true}

// assistant is what the barrier and response reconciliation need of an
// assistant message: its tool calls in order, its text blocks joined and
// its stop reason.
type assistant struct {
	ids, names []string
	text, stop string
}

// decodeAssistant reads a message_end payload with the strict decoder
// (names exact, a repeated name refused); ok is false for anything but an
// assistant message.
func decodeAssistant(payload []byte) (assistant, bool) {
	var p struct {
		Message struct {
			Role       string `json:"role"`
			StopReason string `json:"stopReason"`
			Content    []struct {
				Type string `json:"type"`
				Text string `json:"text"`
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"content"`
		} `json:"message"`
	}
	if strictjson.Unmarshal(payload, &p, payloadPolicy) != nil || p.Message.Role != pimessage.RoleAssistant {
		return assistant{}, false
	}
	var a assistant
	var b strings.Builder
	for _, c := range p.Message.Content {
		switch c.Type {
		case pimessage.KindToolCall:
			a.ids, a.names = append(a.ids, c.ID), append(a.names, c.Name)
		case pimessage.KindText:
			b.WriteString(c.Text)
		}
	}
	a.text, a.stop = b.String(), p.Message.StopReason
	return a, true
}

// onToolCall blocks the calls the barrier rejected.
func (x *ext) onToolCall(ctx context.Context, ev *piext.Event, p piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	sess.mu.Lock()
	reason := sess.barrier[p.ToolCallID]
	delete(sess.barrier, p.ToolCallID)
	sess.mu.Unlock()
	if reason == "" {
		return nil, nil
	}
	return &piext.ToolCallEventResult{Block: true, Reason: reason}, nil
}

// onTurnEnd stores an armed final answer as the Session response, completes
// the run and records the native checkpoint entry (reference §1.12 step 5).
func (x *ext) onTurnEnd(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	sess.mu.Lock()
	resp := sess.response
	sess.response = nil
	sess.mu.Unlock()
	if resp == nil || sess.store == nil {
		return nil, nil
	}
	if _, err := sess.store.AcceptResponse(ctx, *resp); err != nil {
		x.block(ctx, sess, ev.Pi, err)
		return nil, nil
	}
	snap, err := sess.store.Read(ctx)
	if err != nil {
		x.block(ctx, sess, ev.Pi, err)
		return nil, nil
	}
	sess.mu.Lock()
	sess.settle = settle{accepted: !sess.bootstrap, anchor: sess.run.anchor}
	sess.bootstrap = false
	sess.run = run{}
	mode := sess.policy.Mode
	sess.mu.Unlock()
	_ = ev.Pi.AppendEntry(ctx, entrySnapshot, snapshotData(snap, mode, false, ""))
	return nil, nil
}

// snapshotData is a "state-flow-snapshot" entry (reference §2.2):
// {boundary, mode, step, bootstrap?: true, specification?}, the
// specification only while the run is unfinished.
func snapshotData(snap *store.Snapshot, mode string, bootstrap bool, spec string) map[string]any {
	data := map[string]any{"mode": mode, "step": snap.Step}
	if h := snap.View.Head(); h.ID != "" {
		data["boundary"] = h.ID
	}
	if bootstrap {
		data["bootstrap"] = true
	}
	if spec != "" {
		data["specification"] = spec
	}
	return data
}

// newUUID returns a random (version 4) UUID, the volatile projection id.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
