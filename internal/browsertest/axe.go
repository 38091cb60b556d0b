package browsertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// AxeSource returns axe.min.js from the test peers cache, or ends the test
// (t.Fatal under CI=true, t.Skip otherwise).
func AxeSource(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(TestDeps(), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is required under CI=true: %v", err)
		}
		t.Skipf("axe-core not installed (run scripts/install-test-deps): %v", err)
	}
	return string(data)
}

// AxeResult is the part of an axe-core result the tests read.
type AxeResult struct {
	Violations []struct {
		ID    string `json:"id"`
		Help  string `json:"help"`
		Nodes []struct {
			Target  []any  `json:"target"`
			HTML    string `json:"html"`
			Summary string `json:"failureSummary"`
		} `json:"nodes"`
	} `json:"violations"`
	Passes []struct {
		ID string `json:"id"`
	} `json:"passes"`
}

// Messages lists one line per violating node.
func (r *AxeResult) Messages() []string {
	var msgs []string
	for _, v := range r.Violations {
		for _, n := range v.Nodes {
			msgs = append(msgs, fmt.Sprintf("%s (%s): %v %s\n  %s", v.ID, v.Help, n.Target, n.HTML, n.Summary))
		}
	}
	return msgs
}

// AxeTags are the rule tags the checks run: WCAG 2.0–2.2 A/AA and best
// practices.
const axeTags = `["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]`

// Axe injects axe-core (src, from [AxeSource]) when the page lacks it and
// runs it on the taskbar host and its shadow root only. It ends the test
// when axe checked fewer than five rules there, which means it did not see
// the taskbar.
func Axe(t testing.TB, tab *Tab, src string) *AxeResult {
	t.Helper()
	r := AxeRun(t, tab, src, `{include: [["#pi-browser-taskbar-host"]]}`)
	if len(r.Passes) < 5 {
		t.Fatalf("%s: axe passed only %d rules; it did not see the taskbar", tab.Engine, len(r.Passes))
	}
	return r
}

// AxeRun injects axe-core when the page lacks it and runs it on context (a
// JavaScript axe context expression such as `document`).
func AxeRun(t testing.TB, tab *Tab, src, context string) *AxeResult {
	t.Helper()
	if !Eval[bool](t, tab, `typeof axe !== "undefined"`) {
		Do(t, tab, src)
	}
	raw := Eval[string](t, tab, `axe.run(`+context+`, {runOnly: {type: "tag", values: `+axeTags+`}, resultTypes: ["violations", "passes"]}).then((r) => JSON.stringify(r))`)
	var r AxeResult
	Must(t, json.Unmarshal([]byte(raw), &r))
	return &r
}
