package piext_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/piext"
)

// BenchmarkBridgeContext times the context hook inside the bridge around
// the handler (Node's hrtime), against a no-op TypeScript context handler
// timed the same way in the same run (the floor), at 10 messages and at a
// 15 MB transcript, Go changing nothing or one message of at most 10 KB.
// Each case reports p50/p95 in ms and the sidecar's RSS. The sidecar is a
// build without -race (the figures are the product's, not the detector's).
// The 15 MB case runs 30 calls per phase (each clones 15 MB first, as Pi
// does); pass a larger count for the p50-over-200 figure on a quiet host.
//
//	go test -run XX -bench BridgeContext -benchtime 1x ./piext/
func BenchmarkBridgeContext(b *testing.B) {
	root, err := modroot.Find(".")
	if err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(b.TempDir(), "testext")
	if out, err := exec.Command("go", "build", "-o", exe, filepath.Join(root, "piext/internal/testext")).CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name           string
		n, size, iters int
	}{
		{"10msgs", 10, 200, 300},
		{"15MB", 300, 50 << 10, 30},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				got := harness(b, exe, nil, "bench", itoa(c.n), itoa(c.size), itoa(c.iters))
				var r struct {
					Floor, Unchanged, OneEdit struct{ P50, P95 float64 }
					SidecarRssKiB             float64
				}
				if err := json.Unmarshal(got["BENCH"], &r); err != nil {
					b.Fatalf("%s: %v", got["BENCH"], err)
				}
				b.ReportMetric(r.Floor.P50, "floor-p50-ms")
				b.ReportMetric(r.Floor.P95, "floor-p95-ms")
				b.ReportMetric(r.Unchanged.P50, "unchanged-p50-ms")
				b.ReportMetric(r.Unchanged.P95, "unchanged-p95-ms")
				b.ReportMetric(r.OneEdit.P50, "oneedit-p50-ms")
				b.ReportMetric(r.OneEdit.P95, "oneedit-p95-ms")
				b.ReportMetric(r.Unchanged.P50-r.Floor.P50, "added-p50-ms")
				b.ReportMetric(r.SidecarRssKiB/1024, "sidecar-rss-MB")
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkServeContext is the sidecar's share of a context call at 15 MB
// (300 messages of 50 KB the mirror holds, sent as ids; a no-op handler):
// decoding the request, rebuilding the list from the mirror, answering,
// plus this in-process client's encoding (the bridge's share, in Node, is
// not in it). The baseline in the same run is a hook round trip with an
// empty payload.
//
//	go test -run XX -bench ServeContext -benchmem ./piext/
func BenchmarkServeContext(b *testing.B) {
	noop := func(context.Context, *piext.Event) (any, error) { return nil, nil }
	ext := &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "context", Handle: noop}, {Event: "agent_start", Handle: noop}}}
	conn := serveBench(b, ext)
	ctx := context.Background()
	ids := warmContext(b, conn)
	b.Run("hook-baseline", func(b *testing.B) {
		for range b.N {
			if err := conn.Call(ctx, piext.MethodHook, piext.HookParams{Event: "agent_start", Generation: 1, Payload: json.RawMessage(`{}`)}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("context-15MB-ids", func(b *testing.B) {
		for range b.N {
			if err := conn.Call(ctx, piext.MethodHook, piext.HookParams{Event: "context", Generation: 1, Messages: ids}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkServeContextRead is BenchmarkServeContext's 15 MB call with a
// handler reading role, timestamp and content of every message (the
// members a context handler selects on), against the no-op handler in the
// same run: what reading costs once the mirror holds the messages.
//
//	go test -run XX -bench ServeContextRead -benchmem ./piext/
func BenchmarkServeContextRead(b *testing.B) {
	read := false
	handle := func(_ context.Context, ev *piext.Event) (any, error) {
		for _, m := range ev.Messages {
			if read && (m.Role() != "user" || m.Field("timestamp") == nil || m.Field("content") == nil) {
				return nil, errors.New("member absent")
			}
		}
		return nil, nil
	}
	conn := serveBench(b, &piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: "context", Handle: handle}}})
	ids := warmContext(b, conn)
	for _, c := range []struct {
		name string
		read bool
	}{{"noop", false}, {"read", true}} {
		b.Run(c.name, func(b *testing.B) {
			read = c.read
			for range b.N {
				if err := conn.Call(context.Background(), piext.MethodHook, piext.HookParams{Event: "context", Generation: 1, Messages: ids}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// warmContext sends conn's sidecar 300 user messages of 50 KB (15 MB) by
// context/warm and returns them as ids, the way the bridge sends messages
// the mirror holds.
func warmContext(b *testing.B, conn *jsonrpc.Conn) []piext.WireMessage {
	b.Helper()
	full := make([]piext.WireMessage, 300)
	ids := make([]piext.WireMessage, len(full))
	for i := range full {
		raw, _ := json.Marshal(map[string]any{"role": "user", "timestamp": i, "content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 50<<10)}}})
		full[i] = piext.WireMessage{Hash: "k" + itoa(i), Message: raw}
		ids[i] = piext.WireMessage{Hash: full[i].Hash}
	}
	if err := conn.Call(context.Background(), piext.MethodContextWarm, piext.WarmParams{Generation: 1, Messages: full}, nil); err != nil {
		b.Fatal(err)
	}
	return ids
}

// serveBench serves ext over in-process pipes, bound to generation 1, and
// returns the host's end; it is closed and Serve awaited when b ends.
func serveBench(b *testing.B, ext *piext.Extension) *jsonrpc.Conn {
	b.Helper()
	toExtR, toExtW := io.Pipe()
	fromExtR, fromExtW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- piext.Serve(context.Background(), ext, toExtR, fromExtW) }()
	conn := jsonrpc.NewConn(&rw{fromExtR, toExtW, []io.Closer{fromExtR, toExtW}}, &jsonrpc.Options{})
	b.Cleanup(func() {
		conn.Close()
		toExtW.Close()
		<-done
	})
	if err := conn.Call(context.Background(), piext.MethodSessionBind, piext.BindParams{Generation: 1}, nil); err != nil {
		b.Fatal(err)
	}
	return conn
}
