package extension_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/extension"
	"github.com/pikit-dev/pikit/piext/install"
)

// BenchmarkContextProjection times the context hook as piext measures it
// (inside the bridge around the handler, Node's hrtime): projection of 50
// committed blocks over a 15 MB transcript (300 messages of 50 KB; each
// block replaces 2 messages), against a no-op TypeScript context handler
// timed the same way in the same run. It reports p50/p95 in ms, the added
// p50 and p95 and their ratio to the 20 ms budget (seed 001's performance
// target as the issue states it). The sidecar is `pikit ext run midcompact`
// built without -race. unchanged is the same bridge path after a session
// switch to a branch without blocks (the piext cost of a 15 MB context
// call). The first call of a session is timed three ways: cold (no
// warm-up, as after a sidecar respawn: the 15 MB cross the pipe inside the
// hook; logged when it fails open), warmed (the bridge sent the session's
// messages ahead once the session was quiet after session_start) and
// raced (the call right after session_start, before that warm-up: it
// sends what the sidecar lacks); warmed and raced must project, not fail
// open on the 5 s hook timeout. unchanged passes the call (midcompact's
// Pass: no committed block), so it is the bridge's probe, not a 15 MB
// round trip.
//
//	go test -run XX -bench ContextProjection -benchtime 1x ./midcompact/extension/
func BenchmarkContextProjection(b *testing.B) {
	in := pitest.Require(b)
	root, err := modroot.Find(".")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	exe := filepath.Join(dir, "pikit")
	if out, err := exec.Command("go", "build", "-o", exe, filepath.Join(root, "cmd/pikit")).CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	folder, err := install.Write(install.Options{Dir: filepath.Join(dir, "ext"), Command: []string{exe, "ext", "run", "midcompact"},
		Manifest: extension.New().Manifest()})
	if err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(dir, "data.json")
	if err := os.WriteFile(data, transcript(b, 300, 50<<10, 50), 0o600); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(root, "midcompact/extension/testdata/bench.mjs")
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(in.NodeBin, "node"), "--experimental-strip-types", "--no-warnings", script,
			filepath.Join(folder, "index.mjs"), data, "60")
		cmd.Env = append(os.Environ(), "TMPDIR="+dir, "PI_CODING_AGENT_DIR="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil {
			b.Fatalf("bench.mjs: %v\n%s\n%s", err, out, stderr.String())
		}
		var r struct {
			Floor, Unchanged, Projection             struct{ P50, P95 float64 }
			FirstColdMs, FirstWarmedMs, FirstRacedMs float64
			FirstErrors                              []*string
			FirstSummaries                           []int
			OutMessages, Summaries                   int
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "BENCH "); ok {
				b.Log(v)
				if err := json.Unmarshal([]byte(v), &r); err != nil {
					b.Fatal(err)
				}
			}
		}
		if r.Summaries != 50 || r.OutMessages != 250 {
			b.Fatalf("projection replaced %d blocks into %d messages, want 50 into 250", r.Summaries, r.OutMessages)
		}
		for i, name := range []string{"cold", "warmed", "raced"} {
			switch e := r.FirstErrors[i]; {
			case e != nil && name == "cold":
				// Without a warm-up (only after a sidecar respawn) 15 MB
				// cross the pipe inside the hook: on a loaded host that can
				// pass the hook timeout and fail open.
				b.Logf("the first call without a warm-up failed open: %s", *e)
			case e != nil:
				b.Errorf("the first call (%s) failed open: %s", name, *e)
			case r.FirstSummaries[i] != 50:
				b.Errorf("the first call (%s) projected %d blocks, want 50", name, r.FirstSummaries[i])
			}
		}
		b.ReportMetric(r.Floor.P50, "noop-p50-ms")
		b.ReportMetric(r.Floor.P95, "noop-p95-ms")
		b.ReportMetric(r.Projection.P50, "projection-p50-ms")
		b.ReportMetric(r.Projection.P95, "projection-p95-ms")
		b.ReportMetric(r.Projection.P50-r.Floor.P50, "added-p50-ms")
		b.ReportMetric(r.Projection.P95-r.Floor.P95, "added-p95-ms")
		b.ReportMetric(r.Unchanged.P50, "unchanged-p50-ms")
		b.ReportMetric(r.Projection.P50-r.Unchanged.P50, "projection-over-unchanged-p50-ms")
		b.ReportMetric((r.Projection.P50-r.Floor.P50)/20, "added-p50/20ms")
		b.ReportMetric(r.FirstColdMs, "first-cold-ms")
		b.ReportMetric(r.FirstWarmedMs, "first-warmed-ms")
		b.ReportMetric(r.FirstRacedMs, "first-raced-ms")
	}
}

// transcript is {messages, branch}: n alternating user/assistant messages
// of size bytes each, and a branch holding one midcompact-state entry whose
// blocks each cover two messages, spread over the transcript.
func transcript(b *testing.B, n, size, blocks int) []byte {
	b.Helper()
	msgs := make([]json.RawMessage, n)
	keys := make([]string, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := fmt.Sprintf("m%d ", i) + strings.Repeat("x", size)
		raw, _ := json.Marshal(map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": i + 1})
		msgs[i] = raw
		m, err := midcompact.ParseMessage(raw)
		if err != nil {
			b.Fatal(err)
		}
		if keys[i], err = midcompact.MessageKey(&m); err != nil {
			b.Fatal(err)
		}
	}
	st := midcompact.State{Version: 1, CreatedAt: "2026-01-01T00:00:00.000Z"}
	step := n / blocks
	for k := range blocks {
		at := k * step
		st.Blocks = append(st.Blocks, midcompact.Block{ID: fmt.Sprintf("c%04d", k+1), Topic: "topic", Summary: "summary of block",
			EntryIDs: []string{fmt.Sprintf("m%d", at), fmt.Sprintf("m%d", at+1)}, MessageKeys: keys[at : at+2], CreatedAt: st.CreatedAt})
	}
	entry := map[string]any{"type": "custom", "id": "s1", "parentId": nil, "timestamp": st.CreatedAt,
		"customType": midcompact.StateEntryType, "data": st}
	out, err := json.Marshal(map[string]any{"messages": msgs, "branch": []any{entry}})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
