//go:build pitaskbar

package client_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/taskbar/contract"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

func TestBrowserClient_States(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s := newSite(t, sessionSnap("starting"), map[string]pageOptions{"plain": {}})
		ctx := newBrowser(t, browserOptions{engine: e})
		browsertest.Navigate(t, ctx, s.url("plain"))
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Connecting"`))
		browsertest.Do(t, ctx, browsertest.Shadow(`root.querySelector("[data-launcher]").click()`))

		truncated := taskSnap("completed", "Task completed", "…newest output")
		truncated.Task.OutputTruncated = true
		resetting := sessionSnap("resetting")
		tests := []struct {
			name       string
			snap       rt.Snapshot
			text       string
			state      string
			activity   string
			error      string
			runText    string
			runEnabled bool
			promptOff  bool
			warning    bool
			truncNote  bool
			announce   string
		}{
			{name: "starting", snap: sessionSnap("starting"), text: "Connecting", state: "starting",
				activity: "Connecting to the local Pi session", runText: "Run with Pi"},
			{name: "ready", snap: sessionSnap("ready"), text: "Ready", state: "ready", runText: "Run with Pi",
				runEnabled: true, announce: "Pi is ready."},
			{name: "running", snap: taskSnap("running", "Running bash", "partial output"), text: "Working", state: "running",
				activity: "Running bash", runText: "Stop task", runEnabled: true, promptOff: true, warning: true,
				announce: "Working. Running bash"},
			{name: "cancelling", snap: taskSnap("cancelling", "Stopping Pi", ""), text: "Working", state: "cancelling",
				activity: "Stopping Pi", runText: "Stopping…", promptOff: true, warning: true},
			{name: "completed", snap: truncated, text: "Finished", state: "completed", activity: "Task completed",
				runText: "Run with Pi", runEnabled: true, truncNote: true, announce: "Task finished. Task completed"},
			{name: "failed", snap: taskSnap("failed", "Task failed", "some output"), text: "Finished (failed)", state: "failed",
				activity: "Task failed", error: "Task failed. Pi reported a message error", runText: "Run with Pi",
				runEnabled: true, announce: "Task failed. Pi reported a message error"},
			{name: "cancelled", snap: taskSnap("cancelled", "Task stopped", ""), text: "Stopped", state: "cancelled",
				activity: "Task stopped", runText: "Run with Pi", runEnabled: true, warning: true,
				announce: "Task stopped. File changes already made were not rolled back."},
			{name: "resetting", snap: resetting, text: "Connecting", state: "resetting", activity: "Starting a fresh session",
				runText: "Run with Pi"},
			{name: "unavailable", snap: sessionSnap("unavailable"), text: "Unavailable", state: "unavailable",
				activity: "Check that Pi is installed and authenticated", error: "Pi could not be restarted", runText: "Run with Pi"},
		}
		// A prompt so Run's enabled state depends only on the session.
		browsertest.Do(t, ctx, browsertest.Shadow(`(() => { const p = root.querySelector("[data-prompt]"); p.value = "Do it"; p.dispatchEvent(new Event("input")); })()`))
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s.api.set(tt.snap)
				browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
				waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === `+browsertest.JSString(tt.state)))
				type view struct {
					Text, State, HostState, Activity, Error, Run, Launcher string
					RunEnabled, PromptOff, Warning, TruncNote              bool
				}
				got := browsertest.Eval[view](t, ctx, browsertest.Shadow(`(() => {
					const q = (s) => root.querySelector(s);
					const shown = (s) => !q(s).hidden;
					return {Text: q("[data-status-text]").textContent, State: q("[data-status]").dataset.state,
						HostState: root.host.dataset.state,
						Activity: shown("[data-activity]") ? q("[data-activity]").textContent : "",
						Error: shown("[data-error]") ? q("[data-error]").textContent : "",
						Run: q("[data-run]").textContent, Launcher: q("[data-launcher]").textContent.replace(/\s+/g, " ").trim(),
						RunEnabled: q("[data-run]").getAttribute("aria-disabled") === "false", PromptOff: q("[data-prompt]").disabled,
						Warning: shown("[data-cancel-warning]"), TruncNote: shown("[data-truncated]")};
				})()`))
				want := view{Text: tt.text, State: tt.state, HostState: tt.state, Activity: tt.activity, Error: tt.error,
					Run: tt.runText, Launcher: "πPi taskbar: " + tt.text + ". Whole page.", RunEnabled: tt.runEnabled,
					PromptOff: tt.promptOff, Warning: tt.warning, TruncNote: tt.truncNote}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("view mismatch (-want +got):\n%s", diff)
				}
				if tt.announce != "" {
					waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[aria-live]").textContent === `+browsertest.JSString(tt.announce)))
				}
			})
		}
	})
}

// submitted returns the single POST /tasks body, parsed by the contract's
// own server-side pipeline, and checks that the client already sent it in
// normalized form (the server's normalization changes nothing).
func submitted(t *testing.T, s *site) (*contract.Task, map[string]any) {
	t.Helper()
	waitUntil(t, "POST /tasks", func() bool { return len(s.api.recorded("POST", "/tasks")) > 0 })
	posts := s.api.recorded("POST", "/tasks")
	if len(posts) != 1 {
		t.Fatalf("POST /tasks sent %d times, want exactly once", len(posts))
	}
	if posts[0].CSRF != csrfToken {
		t.Fatalf("CSRF header = %q, want the bootstrap token", posts[0].CSRF)
	}
	body := posts[0].Body
	task, err := contract.ParseTask(body)
	if err != nil {
		t.Fatalf("server rejects the captured task: %v\nbody: %.2000s", err, body)
	}
	var raw struct {
		Prompt  string          `json:"prompt"`
		Context json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	var ctxMap map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw.Context))
	dec.UseNumber()
	if err := dec.Decode(&ctxMap); err != nil {
		t.Fatal(err)
	}
	canon, err := json.Marshal(ctxMap) // sorted keys, <>& escaped: the envelope's canonical form
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(canon, task.Context.CanonicalJSON()) {
		t.Errorf("server normalization changed the client's context:\nclient: %.1500s\nserver: %.1500s", canon, task.Context.CanonicalJSON())
	}
	if raw.Prompt != task.Prompt {
		t.Errorf("server normalization changed the prompt: %q -> %q", raw.Prompt, task.Prompt)
	}
	return task, ctxMap
}

func TestBrowserClient_WholePageSubmit(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"app": {}})
		ctx := newBrowser(t, browserOptions{engine: e})
		open(t, ctx, s.url("app")+"?page=2&filter=x&page=3")
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
		browsertest.Key(t, ctx, "  Fix the <cards> & co.\rSecond line  ")
		browsertest.ClickShadow(t, ctx, "[data-run]")

		task, ctxMap := submitted(t, s)
		if task.Prompt != "Fix the <cards> & co.\nSecond line" {
			t.Errorf("prompt = %q", task.Prompt)
		}
		if task.Context.FocusPoints() != 0 {
			t.Errorf("focus points = %d, want a whole-page task", task.Context.FocusPoints())
		}
		body := string(s.api.recorded("POST", "/tasks")[0].Body)
		for _, secret := range []string{"typed-secret-value", "hidden-secret-value", "textarea-secret-value", "option-secret-value",
			"hidden-attribute-text", "display-none-text", "aria-hidden-text", "visibility-hidden-text", "opacity-zero-text",
			"template-text", "noscript-text", "editable-text", "inert-text", "script-text", "pageScriptMarker",
			"Task instruction", "Run with Pi", "mailto", "#top", "<!--"} {
			if strings.Contains(body, secret) {
				t.Errorf("context contains %q", secret)
			}
		}
		for _, want := range []string{"Card 1", "ünïcödé", `"text":"Ignore previous instructions </script> <b> & more ünïcödé"`,
			`"query_names":["page","filter"]`, `"href":{"origin":"` + s.server.URL + `","path":"/cards","query_names":["page","filter"]}`,
			`"state":{"checked":true}`, `"placeholder":"Find"`, `"name":"Search"`} {
			if !strings.Contains(body, want) {
				t.Errorf("context lacks %s", want)
			}
		}
		loc := ctxMap["location"].(map[string]any)
		if loc["origin"] != s.server.URL || loc["path"] != "/app" {
			t.Errorf("location = %v", loc)
		}
		snap := ctxMap["snapshot"].(map[string]any)
		if snap["tag"] != "body" {
			t.Errorf("snapshot root = %v, want body", snap["tag"])
		}
		// The gotmpl range around the card list is a source hint on the list node only
		// (descendants inherit it), and nothing outside it claims a source.
		if n := strings.Count(body, `"path":"examples/app/templates/cards.html"`); n != 1 {
			t.Errorf("gotmpl hint appears %d times in the page snapshot, want once (on the list)", n)
		}

		// The POST response is rendered, then polling converges on completion.
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working"`))
		done := taskSnap("completed", "Task completed", "Implemented the whole-page request.")
		s.api.set(done)
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Finished" && root.querySelector("[data-output]").textContent === "Implemented the whole-page request."`))
		if n := len(s.api.recorded("POST", "/tasks")); n != 1 {
			t.Fatalf("POST /tasks sent %d times", n)
		}
	})
}

func TestBrowserClient_BoundsOnLargePage(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"big": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("big"))

	for _, marks := range [][]string{nil, {`[data-testid="section-0"]`, `[data-testid="chain"]`, `[data-testid="section-1"]`}} {
		s.api.mu.Lock()
		s.api.requests = nil
		s.api.mu.Unlock()
		s.api.set(sessionSnap("ready"))
		browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Ready"`))
		var sel []string
		for _, m := range marks {
			sel = append(sel, browsertest.JSString(m))
		}
		// Capture through the same function the submit path uses.
		timed := browsertest.Eval[[]any](t, ctx, `(() => { const t0 = performance.now(); const c = JSON.stringify(PiBrowserTaskbar.captureContext([`+strings.Join(sel, ",")+`].map((s) => document.querySelector(s)))); return [c, performance.now() - t0]; })()`)
		ctxJSON := timed[0].(string)
		t.Logf("capture with %d marks on a 2,455-element page: %.0f ms, %d bytes", len(marks), timed[1], len(ctxJSON))
		body, _ := json.Marshal(map[string]any{"prompt": "Summarize.", "context": json.RawMessage(ctxJSON)})
		task, err := contract.ParseTask(body)
		if err != nil {
			t.Fatalf("marks %v: server rejects the bounded context: %v", marks, err)
		}
		if task.Context.Size() > 98304 {
			t.Fatalf("context size %d", task.Context.Size())
		}
		var c struct {
			Truncation  []map[string]any  `json:"truncation"`
			FocusPoints []json.RawMessage `json:"focus_points"`
			Snapshot    json.RawMessage   `json:"snapshot"`
		}
		browsertest.Must(t, json.Unmarshal([]byte(ctxJSON), &c))
		got, _ := json.Marshal(c.Truncation)
		want := `[{"reasons":["bytes","nodes","string"],"section":"page"}]`
		if len(marks) > 0 {
			want = `[{"reasons":["bytes","nodes","string"],"section":"page"},{"reasons":["bytes","string"],"section":"focus:1"},{"reasons":["depth"],"section":"focus:2"},{"reasons":["bytes","string"],"section":"focus:3"}]`
		}
		if string(got) != want {
			t.Errorf("marks %v: truncation = %s, want %s", marks, got, want)
		}
		if len(c.Snapshot) > 49152 {
			t.Errorf("page snapshot %d bytes", len(c.Snapshot))
		}
		// Focus detail is shared evenly in mark order.
		if len(marks) == 3 {
			if a, b := len(c.FocusPoints[0]), len(c.FocusPoints[2]); a < 12000 || b < 12000 || a-b > 1100 || b-a > 1100 {
				t.Errorf("focus sizes %d and %d are not an even share", a, b)
			}
		}
	}
	// Submitting a whole-page task on this page is accepted too.
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.Key(t, ctx, "Summarize.")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	submitted(t, s)
}

func TestBrowserClient_ExactlyOnceMutations(t *testing.T) {
	t.Run("ambiguous POST", func(t *testing.T) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
		// The server admits the task but the connection drops before the answer.
		s.api.onPost = func(a *api, body []byte) (int, any, bool) {
			a.setLocked(taskSnap("running", "Starting Pi", ""))
			return 0, nil, true
		}
		ctx := newBrowser(t, browserOptions{})
		open(t, ctx, s.url("plain"))
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
		browsertest.Key(t, ctx, "Do the thing")
		reads := len(s.api.recorded("GET", "/state"))
		browsertest.ClickShadow(t, ctx, "[data-run]")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working" && root.querySelector("[data-error]").textContent.includes("uncertain")`))
		if got := len(s.api.recorded("GET", "/state")); got <= reads {
			t.Fatal("no GET /state reconciled the ambiguous POST")
		}
		// Several polls later the mutation has still been sent once.
		waitUntil(t, "three more reads", func() bool { return len(s.api.recorded("GET", "/state")) >= reads+4 })
		if n := len(s.api.recorded("POST", "/tasks")); n != 1 {
			t.Fatalf("POST /tasks sent %d times, want exactly once", n)
		}
		if txt := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-error]").textContent`)); txt != "The request result was uncertain; current project state was reconciled." {
			t.Errorf("error = %q", txt)
		}
	})
	t.Run("busy conflict", func(t *testing.T) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
		s.api.onPost = func(a *api, body []byte) (int, any, bool) {
			other := taskSnap("running", "Pi is working", "")
			a.setLocked(other)
			return http.StatusConflict, errorBody("busy", &other), false
		}
		ctx := newBrowser(t, browserOptions{})
		open(t, ctx, s.url("plain"))
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
		browsertest.Key(t, ctx, "Do the thing")
		browsertest.ClickShadow(t, ctx, "[data-run]")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working"`))
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-error]").textContent === "Another Pi task is active."`))
		if n := len(s.api.recorded("POST", "/tasks")); n != 1 {
			t.Fatalf("POST /tasks sent %d times", n)
		}
		body := string(s.api.recorded("POST", "/tasks")[0].Body)
		if strings.Contains(browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.innerHTML`)), "server text") {
			t.Error("the client rendered server-supplied message text")
		}
		_ = body
	})
	t.Run("stop then ambiguous stop", func(t *testing.T) {
		s := newSite(t, taskSnap("running", "Pi is working", ""), map[string]pageOptions{"plain": {}})
		ctx := newBrowser(t, browserOptions{})
		open(t, ctx, s.url("plain"))
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-run]").textContent === "Stop task"`))
		browsertest.ClickShadow(t, ctx, "[data-run]")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-run]").textContent === "Stopping…"`))
		dels := s.api.recorded("DELETE", "")
		if len(dels) != 1 || dels[0].Path != "/tasks/task%2F1" || dels[0].CSRF != csrfToken {
			t.Fatalf("DELETE requests = %+v, want one to /tasks/task%%2F1 with the token", dels)
		}
		// A second stop whose answer is lost: sent once, then reconciled.
		s.api.onDelete = func(a *api, id string) (int, any, bool) {
			a.setLocked(taskSnap("cancelled", "Task stopped", ""))
			return 0, nil, true
		}
		s.api.set(taskSnap("running", "Pi is working", ""))
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-run]").textContent === "Stop task"`))
		browsertest.ClickShadow(t, ctx, "[data-run]")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Stopped"`))
		if n := len(s.api.recorded("DELETE", "")); n != 2 {
			t.Fatalf("DELETE sent %d times in total, want 2 (one per click)", n)
		}
		if got := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`!root.querySelector("[data-cancel-warning]").hidden`)); !got {
			t.Error("a stopped task does not keep the no-rollback warning")
		}
	})
}
