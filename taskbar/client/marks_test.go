//go:build pitaskbar

package client_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/taskbar/contract"
)

type sourceRef struct {
	Role      string `json:"role"`
	Path      string `json:"path"`
	Line      int    `json:"line,omitempty"`
	Symbol    string `json:"symbol,omitempty"`
	Precision string `json:"precision"`
}

type sourceHint struct {
	Status     string      `json:"status"`
	References []sourceRef `json:"references"`
}

func TestBrowserClient_SourceHintClassification(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"hints": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("hints"))
	type result struct {
		Name string
		Want string
		Got  string
	}
	results := browsertest.Eval[[]result](t, ctx, `Array.from(document.querySelectorAll("[data-case]"), (section) => ({
		Name: section.dataset.case, Want: section.dataset.want,
		Got: JSON.stringify(PiBrowserTaskbar.sourceHint(section.querySelector("[data-target]"), "demo"))}))`)
	if len(results) < 30 {
		t.Fatalf("only %d cases found", len(results))
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			var want, got sourceHint
			browsertest.Must(t, json.Unmarshal([]byte(r.Want), &want))
			browsertest.Must(t, json.Unmarshal([]byte(r.Got), &got))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("hint mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// Without a project app HEEx evidence is unavailable, not guessed.
	got := browsertest.Eval[string](t, ctx, `JSON.stringify(PiBrowserTaskbar.sourceHint(document.querySelector('[data-case="h-live-component"] [data-target]'), null))`)
	if got != `{"status":"unavailable","references":[]}` {
		t.Errorf("HEEx without project app = %s", got)
	}
}

func TestBrowserClient_FocusedSubmitAndCopyPrompt(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"app": {ProjectApp: "demo"}})
		ctx := newBrowser(t, browserOptions{engine: e})
		open(t, ctx, s.url("app"))
		browsertest.ClickShadow(t, ctx, "[data-launcher]")

		// Four marks by pointer: a gotmpl-annotated heading, an ERB partial, a
		// HEEx component and an element that needs an nth-of-type chain.
		targets := []string{`[data-testid="card-2"] h2`, `[data-testid="erb-card"]`, `[data-testid="heex-button"]`, `.plain span:nth-of-type(2)`}
		for i, sel := range targets {
			browsertest.ClickShadow(t, ctx, "[data-mark]")
			if p := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed")`)); p != "true" {
				t.Fatalf("Mark element aria-pressed = %s while marking", p)
			}
			clicks := browsertest.Eval[float64](t, ctx, `window.__pageClicks = 0, document.addEventListener("click", () => window.__pageClicks++), 0`)
			browsertest.ClickPage(t, ctx, sel)
			waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === `+browsertest.JSString(string(rune('1'+i)))+` * 1`))
			if c := browsertest.Eval[float64](t, ctx, `window.__pageClicks`); c != clicks {
				t.Errorf("the marking click reached the page (%v clicks)", c)
			}
			if f := browsertest.Focused(t, ctx); f != "data-prompt" {
				t.Errorf("focus after marking = %s, want the instruction", f)
			}
		}
		labels := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`Array.from(root.querySelectorAll("[data-marks] li .pi-mark-label"), (e) => e.textContent)`))
		wantLabels := []string{`1. [data-testid="card-2"] > h2`, `2. [data-testid="erb-card"]`, `3. [data-testid="heex-button"]`}
		for i, w := range wantLabels {
			if labels[i] != w {
				t.Errorf("mark %d label = %q, want %q", i+1, labels[i], w)
			}
		}
		// The chain selector names exactly the clicked element.
		chain := strings.TrimPrefix(labels[3], "4. ")
		if ok := browsertest.Eval[bool](t, ctx, `document.querySelectorAll(`+browsertest.JSString(chain)+`).length === 1 && document.querySelector(`+browsertest.JSString(chain)+`) === document.querySelector(".plain span:nth-of-type(2)")`); !ok || !strings.Contains(chain, "nth-of-type(2)") {
			t.Errorf("chain selector %q does not name the element uniquely", chain)
		}
		if scope := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-scope]").textContent`)); scope != "4 marked elements" {
			t.Errorf("scope = %q", scope)
		}
		// Outlines are drawn in the next animation frame: wait for it.
		waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll(".pi-outline-mark").length === 4`))

		// Copy prompt builds the same bytes as the server's envelope.
		browsertest.Key(t, ctx, "Align the <marked> cards & buttons.")
		browsertest.Do(t, ctx, `Object.defineProperty(navigator, "clipboard", {configurable: true, value: {writeText: async (text) => { window.__copied = text; }}})`)
		browsertest.ClickShadow(t, ctx, "[data-copy]")
		waitJS(t, ctx, `typeof window.__copied === "string"`)
		copied := browsertest.Eval[string](t, ctx, `window.__copied`)
		const begin, end = "\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n", "\n--- END UNTRUSTED BROWSER CONTEXT ---"
		prompt, rest, ok := strings.Cut(copied, begin)
		if !ok || !strings.HasSuffix(rest, end) {
			t.Fatalf("copied text is not an envelope: %.300q", copied)
		}
		ctxJSON := strings.TrimSuffix(rest, end)
		fromCopy, err := contract.NewTask(prompt, []byte(ctxJSON))
		if err != nil {
			t.Fatalf("server rejects the copied context: %v", err)
		}
		if got := string(fromCopy.Envelope()); got != copied {
			t.Errorf("copy prompt differs from the server envelope:\nclient: %.400q\nserver: %.400q", copied, got)
		}
		if !strings.Contains(copied, `\u003cmarked\u003e`) && !strings.Contains(copied, "Align the <marked> cards & buttons.") {
			t.Error("envelope lost the instruction")
		}
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-copy]").textContent === "Copied"`))
		if n := len(s.api.recorded("POST", "/tasks")); n != 0 {
			t.Fatalf("Copy prompt submitted %d tasks", n)
		}

		// Submit: the context carries all four focus points with their hints.
		browsertest.ClickShadow(t, ctx, "[data-run]")
		task, ctxMap := submitted(t, s)
		if task.Context.FocusPoints() != 4 {
			t.Fatalf("focus points = %d, want 4", task.Context.FocusPoints())
		}
		if string(task.Envelope()) != copied {
			t.Error("submitted task and copied prompt differ")
		}
		var points []struct {
			Selector  string           `json:"selector"`
			Source    sourceHint       `json:"source"`
			Ancestors []map[string]any `json:"ancestors"`
			Subtree   map[string]any   `json:"subtree"`
		}
		raw, _ := json.Marshal(ctxMap["focus_points"])
		browsertest.Must(t, json.Unmarshal(raw, &points))
		wantSources := []sourceHint{
			{Status: "available", References: []sourceRef{{Role: "template", Path: "examples/app/templates/cards.html", Precision: "template"}}},
			{Status: "available", References: []sourceRef{{Role: "template", Path: "app/views/cards/_card.html.erb", Precision: "template"}}},
			{Status: "available", References: []sourceRef{
				{Role: "definition", Path: "lib/demo_web/components/core_components.ex", Line: 200, Symbol: "DemoWeb.CoreComponents.button", Precision: "line"},
				{Role: "caller", Path: "lib/demo_web/live/card_live.ex", Line: 30, Precision: "line"}}},
			{Status: "unavailable", References: []sourceRef{}},
		}
		for i, w := range wantSources {
			if diff := cmp.Diff(w, points[i].Source); diff != "" {
				t.Errorf("focus %d source (-want +got):\n%s", i+1, diff)
			}
			if points[i].Selector != strings.SplitN(labels[i], ". ", 2)[1] {
				t.Errorf("focus %d selector = %q, label %q", i+1, points[i].Selector, labels[i])
			}
		}
		var tags []string
		for _, a := range points[0].Ancestors {
			tags = append(tags, a["tag"].(string))
		}
		if strings.Join(tags, ">") != "main>ul>li" || points[0].Subtree["tag"] != "h2" || points[0].Subtree["text"] != "Card 2" {
			t.Errorf("focus 1 ancestors %v subtree %v", tags, points[0].Subtree)
		}

		// Removing a mark moves focus to the next remove control; clearing to Mark element.
		// The server has the task; the client locks the marks once the
		// answer (a running task) reaches it, and unlocks them at ready.
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").disabled`))
		s.api.set(sessionSnap("ready"))
		browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
		waitJS(t, ctx, browsertest.Shadow(`!root.querySelector("[data-mark]").disabled`))
		browsertest.ClickShadow(t, ctx, `[data-marks] li:nth-child(2) button`)
		focused := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.activeElement && root.activeElement.getAttribute("aria-label")`))
		if !strings.HasPrefix(focused, "Remove mark 2: [data-testid=\"heex-button\"]") {
			t.Errorf("focus after removing mark 2 = %q", focused)
		}
		browsertest.ClickShadow(t, ctx, "[data-clear]")
		if f := browsertest.Focused(t, ctx); f != "data-mark" {
			t.Errorf("focus after clear = %s, want Mark element", f)
		}
		if scope := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-scope]").textContent`)); scope != "Whole page" {
			t.Errorf("scope after clear = %q", scope)
		}
	})
}

func TestBrowserClient_EnvelopeMatchesGoldens(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	dir, err := contract.FindContractDir(".")
	if err != nil {
		t.Fatal(err)
	}
	goldens, err := filepath.Glob(filepath.Join(dir, "fixtures", "prompts", "*.json"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no prompt goldens in %s: %v", dir, err)
	}
	for _, path := range goldens {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var g struct {
				Instruction    string `json:"instruction"`
				ContextFixture string `json:"context_fixture"`
				Expected       string `json:"expected"`
			}
			data, err := os.ReadFile(path)
			browsertest.Must(t, err)
			browsertest.Must(t, json.Unmarshal(data, &g))
			fixture, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(g.ContextFixture)))
			browsertest.Must(t, err)
			got := browsertest.Eval[string](t, ctx, `PiBrowserTaskbar.envelope(`+browsertest.JSString(g.Instruction)+`, `+string(fixture)+`)`)
			if got != g.Expected {
				t.Errorf("envelope differs from golden:\ngot:  %q\nwant: %q", got, g.Expected)
			}
		})
	}
	// U+2028/2029 never survive normalization, and the escape set is exactly <>&.
	got := browsertest.Eval[string](t, ctx, `PiBrowserTaskbar.canonicalJSON({b: "<>&'\"\\/é", a: [1, null, true]})`)
	if want := `{"a":[1,null,true],"b":"<>&'\"\\/é"}`; got != want {
		t.Errorf("canonicalJSON = %s, want %s", got, want)
	}
}
