package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/pikit-dev/pikit/piext"
)

// fakeHost is a Pi for the edge cases real Pi cannot produce on demand
// (a command that finds the agent holding the planning lock: real Pi's
// waitForIdle only returns after the turn). It keeps a session as a list
// of entries with a leaf, like Pi's session manager, and records notices
// and statuses.
type fakeHost struct {
	mu      sync.Mutex
	entries []map[string]any
	leaf    string
	notices []string
	status  string
	selects []string // answers to Select, in order
	mode    string
	n       int
	labels  map[string]string // entry id → tree label
	busy    bool              // an agent run is active (IsIdle false)
}

func (f *fakeHost) add(e map[string]any) {
	f.n++
	e["id"] = fmt.Sprintf("e%d", f.n)
	if f.leaf == "" {
		e["parentId"] = nil
	} else {
		e["parentId"] = f.leaf
	}
	e["timestamp"] = "2026-01-01T00:00:00.000Z"
	f.entries = append(f.entries, e)
	f.leaf = e["id"].(string)
}

func (f *fakeHost) message(role, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.add(map[string]any{"type": "message", "message": map[string]any{"role": role,
		"content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": float64(f.n + 1)}})
}

func (f *fakeHost) Notify(_ context.Context, m, level string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notices = append(f.notices, level+": "+m)
	return nil
}

func (f *fakeHost) SetStatus(_ context.Context, _, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = text
	return nil
}

func (f *fakeHost) WaitForIdle(context.Context) error { return nil }

func (f *fakeHost) IsIdle(context.Context) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.busy, nil
}

func (f *fakeHost) Call(_ context.Context, target, method string, args ...any) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch target + "." + method {
	case "session.getEntries":
		return json.Marshal(f.entries)
	case "session.getBranch":
		from := f.leaf
		if len(args) > 0 {
			from = args[0].(string)
		}
		return json.Marshal(f.path(from))
	case "session.getBranchCustom":
		var own []map[string]any
		for _, e := range f.path(f.leaf) {
			if ct, _ := e["customType"].(string); e["type"] == "custom" && slices.Contains(args[0].([]string), ct) {
				own = append(own, e)
			}
		}
		return json.Marshal(own)
	case "session.getLabel":
		if l, ok := f.labels[args[0].(string)]; ok {
			return json.Marshal(l)
		}
		return json.RawMessage("null"), nil
	}
	return nil, piext.ErrNotAllowed
}

// path is the branch root → from (f.mu held).
func (f *fakeHost) path(from string) []map[string]any {
	byID := map[string]map[string]any{}
	for _, e := range f.entries {
		byID[e["id"].(string)] = e
	}
	var path []map[string]any
	for id := from; id != ""; {
		e := byID[id]
		path = append([]map[string]any{e}, path...)
		id, _ = e["parentId"].(string)
	}
	return path
}

func (f *fakeHost) GetLeafID(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leaf, nil
}

func (f *fakeHost) AppendEntry(_ context.Context, customType string, data any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(data)
	var v any
	_ = json.Unmarshal(b, &v)
	f.add(map[string]any{"type": "custom", "customType": customType, "data": v})
	return nil
}

func (f *fakeHost) SetLabel(context.Context, string, string) error { return nil }

// NavigateTree moves the leaf; with a label it appends Pi's label entry on
// the target, as Pi 1.6.0 does when not summarizing.
func (f *fakeHost) NavigateTree(_ context.Context, id string, o piext.NavigateOptions) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaf = id
	if o.Label != "" {
		f.add(map[string]any{"type": "label", "targetId": id, "label": o.Label})
		if f.labels == nil {
			f.labels = map[string]string{}
		}
		f.labels[id] = o.Label
	}
	return false, nil
}

func (f *fakeHost) SendUserMessage(_ context.Context, text, _ string) error {
	f.message("user", text)
	return nil
}

func (f *fakeHost) Select(context.Context, string, []string, piext.DialogOptions) (piext.DialogResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.selects) == 0 {
		return piext.DialogResult{Status: piext.DialogCancelled}, nil
	}
	v := f.selects[0]
	f.selects = f.selects[1:]
	return piext.DialogResult{Status: piext.DialogAnswered, Value: v}, nil
}

func (f *fakeHost) Confirm(context.Context, string, string, piext.DialogOptions) (piext.DialogResult, error) {
	return piext.DialogResult{Status: piext.DialogAnswered, Confirmed: true}, nil
}

func (f *fakeHost) HasUI(context.Context) (bool, error) { return true, nil }

func (f *fakeHost) Mode(context.Context) (string, error) {
	if f.mode == "" {
		return "rpc", nil
	}
	return f.mode, nil
}

func (f *fakeHost) GetContextUsage(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"tokens":70000,"contextWindow":100000,"percent":70}`), nil
}

func (f *fakeHost) lastNotice() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notices) == 0 {
		return ""
	}
	return f.notices[len(f.notices)-1]
}
