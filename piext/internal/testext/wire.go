package main

import (
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pikit-dev/pikit/piext"
)

// wireCap is the message cap the bridge and the Go side share (bytes of
// one line without its LF).
const wireCap = 128 << 20

// wireTap sits between piext.Serve and the bridge's pipe when
// PIKIT_PROBE_WIRE=1: it notes the id of the last tool/execute request read
// and lets the probe_wire tool write raw lines between whole records
// (jsonl writes one record per Write). Before it passes on a write of
// bigWrite bytes or more it records "wire-write" with n, the size: a test
// then knows the answer is past piext's last check and on its way.
type wireTap struct {
	rec      *recorder
	in       io.Reader
	mu       sync.Mutex
	out      io.Writer
	lastExec atomic.Int64
	tail     []byte // the end of the previous read: a request split across reads
}

// The bridge writes JSON.stringify({jsonrpc, id, method, params}).
var execID = regexp.MustCompile(`"id":(\d+),"method":"tool/execute"`)

func (w *wireTap) Read(p []byte) (int, error) {
	n, err := w.in.Read(p)
	buf := append(w.tail, p[:n]...)
	for _, m := range execID.FindAllSubmatch(buf, -1) {
		if id, perr := strconv.ParseInt(string(m[1]), 10, 64); perr == nil {
			w.lastExec.Store(id)
		}
	}
	w.tail = append(w.tail[:0], buf[max(0, len(buf)-64):]...)
	return n, err
}

// bigWrite is the size from which wireTap records a write.
const bigWrite = 1 << 20

func (w *wireTap) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) >= bigWrite {
		w.rec.log("wire-write", "n", len(p))
	}
	return w.out.Write(p)
}

// wireTool is probe_wire: what it sends the bridge on purpose.
//   - "oversize": a raw answer to this very call, one byte over the cap
//     (then a normal answer, which comes too late);
//   - "big": a result over the cap through piext (the Go side refuses it);
//   - "late": a 4 MiB result (well past any pipe buffer), once the file
//     "after" exists (ctx ignored);
//   - "stray": a raw answer with a null id, as a JSON-RPC peer answers a
//     line it could not read, then waits for its ctx.
func wireTool(rec *recorder, tap *wireTap) piext.Tool {
	return piext.Tool{Name: "probe_wire", Label: "Probe wire", Description: "Send the bridge a faulty message",
		Parameters: obj(`{"type":"object","properties":{"what":{"type":"string"},"after":{"type":"string"}},"required":["what"]}`),
		Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
			var p struct {
				What  string `json:"what"`
				After string `json:"after"`
			}
			if err := c.Decode(&p); err != nil {
				return nil, err
			}
			rec.log("wire", "what", p.What)
			if p.What == "late" {
				for {
					if _, err := os.Stat(p.After); err == nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				rec.log("wire-answering")
				return &piext.ToolResult{Content: []piext.Content{piext.Text(strings.Repeat("l", 4<<20))}}, nil
			}
			if p.What == "big" {
				return &piext.ToolResult{Content: []piext.Content{piext.Text(strings.Repeat("b", wireCap))}}, nil
			}
			if tap == nil {
				return nil, errors.New("probe_wire needs PIKIT_PROBE_WIRE=1")
			}
			switch p.What {
			case "oversize":
				pre := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(tap.lastExec.Load(), 10) + `,"result":{"content":[{"type":"text","text":"`
				post := `"}]}}`
				line := pre + strings.Repeat("o", wireCap+1-len(pre)-len(post)) + post + "\n"
				if _, err := tap.Write([]byte(line)); err != nil {
					return nil, err
				}
				return &piext.ToolResult{Content: []piext.Content{piext.Text("too late")}}, nil
			case "stray":
				if _, err := tap.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n")); err != nil {
					return nil, err
				}
				<-ctx.Done()
				rec.log("wire-cancelled")
				return nil, ctx.Err()
			}
			return nil, errors.New("probe_wire: unknown what")
		}}
}
