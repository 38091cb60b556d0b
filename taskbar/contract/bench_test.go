package contract_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/contract"
)

// filler is text with escapes, HTML-significant and non-ASCII characters.
const filler = `Card "ü" <b>&</b> total 42 € `

func textOf(n int) string {
	s := strings.Repeat(filler, n/len(filler)+1)
	for len(s) > n {
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "")
}

// bfsTree builds a tree of n nodes, each with text, filling levels breadth
// first with the given fan-out (so depth stays small).
func bfsTree(n, fanout int, tag string, text func(i int) string) []map[string]any {
	nodes := make([]map[string]any, n)
	for i := range nodes {
		nodes[i] = map[string]any{"tag": tag, "text": text(i), "children": []any{}}
	}
	for i := 1; i < n; i++ {
		parent := nodes[(i-1)/fanout]
		parent["children"] = append(parent["children"].([]any), nodes[i])
	}
	nodes[0]["tag"] = "main"
	return nodes
}

// jsonLen is the compact, unescaped JSON length of v.
func jsonLen(t testing.TB, v any) int { return len(marshal(t, v)) }

// fit grows the texts of nodes (each up to 1,000 bytes) until size()
// reaches target exactly.
func fit(t testing.TB, nodes []map[string]any, size func() int, target int) {
	t.Helper()
	cur := size()
	for _, node := range nodes {
		text := node["text"].(string)
		if grow := min(target-cur, 1000-len(text)); grow > 0 {
			node["text"] = text + strings.Repeat("x", grow) // ASCII: one byte each
			cur += grow
		}
	}
	if got := size(); got != target {
		t.Fatalf("fit: size %d, target %d", got, target)
	}
}

// maximalTask is a generated task at the contract's limits: a 750-node page
// snapshot of depth <= 12 at almost 48 KiB, eight focus points with 100-node
// subtrees sharing almost 48 KiB, and a context of exactly 96 KiB.
func maximalTask(t testing.TB) []byte {
	var task map[string]any
	if err := json.Unmarshal([]byte(minimalTask), &task); err != nil {
		t.Fatal(err)
	}
	ctx := task["context"].(map[string]any)
	page := bfsTree(750, 4, "p", func(i int) string { return textOf(20) })
	ctx["snapshot"] = page[0]
	var fps []any
	var last []map[string]any
	for i := range 8 {
		f := focus(fmt.Sprintf(`[data-testid="card-%d"]`, i+1))
		last = bfsTree(100, 3, "span", func(int) string { return textOf(16) })
		f["subtree"] = last[0]
		fps = append(fps, f)
	}
	ctx["focus_points"] = fps
	ctx["truncation"] = []any{map[string]any{"section": "page", "reasons": []any{"bytes", "nodes"}}}

	fit(t, page, func() int { return jsonLen(t, page[0]) }, 49152-300)
	fit(t, last, func() int { return jsonLen(t, fps) }, 49152-50)
	fit(t, page, func() int { return jsonLen(t, ctx) }, 98304)
	body := marshal(t, task)
	if _, err := contract.ParseTask(body); err != nil {
		t.Fatalf("maximal task rejected: %s", reason(err))
	}
	return body
}

func TestMaximalTask(t *testing.T) {
	body := maximalTask(t)
	task, err := contract.ParseTask(body)
	if err != nil {
		t.Fatal(err)
	}
	if got := task.Context.Size(); got != 98304 {
		t.Errorf("context is %d bytes, want 98304", got)
	}
	if got := task.Context.FocusPoints(); got != 8 {
		t.Errorf("%d focus points, want 8", got)
	}
	// One byte more is out of bounds.
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["context"].(map[string]any)["route"] = map[string]any{"method": "GET", "pattern": "/", "handler": "H", "action": nil}
	if _, err := contract.ParseTask(marshal(t, m)); err == nil || !strings.Contains(reason(err), "exceeds") {
		t.Errorf("oversized context: got %v", err)
	}
}

// BenchmarkParseTask measures the POST /tasks pipeline (decode, normalize,
// validate, envelope) against plain encoding/json Unmarshal+Marshal of the
// same bytes as the in-run baseline.
func BenchmarkParseTask(b *testing.B) {
	cases := []struct {
		name string
		body []byte
	}{{"maximal", maximalTask(b)}}
	if dir, err := contract.FindContractDir("."); err == nil {
		if ctx, err := os.ReadFile(filepath.Join(dir, "fixtures/browser-context/rich-whole-page.json")); err == nil {
			body := []byte(`{"prompt":"Improve the checkout button.","context":` + string(ctx) + `}`)
			cases = append([]struct {
				name string
				body []byte
			}{{"rich-whole-page", body}}, cases...)
		}
	}
	for _, c := range cases {
		b.Run(c.name+"/contract", func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				task, err := contract.ParseTask(c.body)
				if err != nil {
					b.Fatal(err)
				}
				_ = task.Envelope()
			}
		})
		b.Run(c.name+"/baseline", func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(c.body, &v); err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU adds the process CPU time per op (user+system, GC included) as
// cpu-ns/op: on a shared, loaded machine it is steadier than wall time.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	d, err := platform.CPUTime()
	if err != nil {
		return 0
	}
	return d
}
