package piext_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
)

// sizedPanel records the rows it was given and the keys it got.
type sizedPanel struct {
	rows []int
	keys []string
}

func (p *sizedPanel) SetRows(rows int) { p.rows = append(p.rows, rows) }

func (p *sizedPanel) Render(width int, _ map[string]string) []string {
	return []string{"w=" + strconv.Itoa(width) + " keys=" + strconv.Itoa(len(p.keys))}
}

func (p *sizedPanel) HandleKey(key string) (bool, any) {
	p.keys = append(p.keys, key)
	return key == "enter", len(p.keys)
}

// A remote component is shown with its overlay options (ctx.ui.custom's
// overlayOptions), learns the terminal's rows before Render and
// HandleKey, and its result comes back to the caller of Custom.
func TestComponent_OverlayOptionsAndRows(t *testing.T) {
	panel := &sizedPanel{}
	result := make(chan string, 1)
	ext := &piext.Extension{Name: "demo", Commands: []piext.Command{{Name: "demo:panel", Run: func(ctx context.Context, c *piext.CommandCall) error {
		raw, err := c.Pi.Custom(ctx, panel, piext.CustomOptions{Overlay: true,
			OverlayOptions: &piext.OverlayOptions{Width: "90%", MaxHeight: "20", Anchor: "center"}})
		if err != nil {
			return err
		}
		result <- string(raw)
		return nil
	}}}}

	toExtR, toExtW := io.Pipe()
	fromExtR, fromExtW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- piext.Serve(context.Background(), ext, toExtR, fromExtW) }()
	var (
		mu    sync.Mutex
		spec  map[string]any
		conn  *jsonrpc.Conn
		lines []string
	)
	conn = jsonrpc.NewConn(&rw{fromExtR, toExtW, []io.Closer{fromExtR, toExtW}}, &jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			var p piext.PiCallParams
			if req.Method != piext.MethodPiCall || json.Unmarshal(req.Params, &p) != nil || p.Target+"."+p.Method != "ui.custom" {
				return nil, jsonrpc.ErrMethodNotFound
			}
			mu.Lock()
			spec, _ = p.Args[0].(map[string]any)
			mu.Unlock()
			id, _ := spec["id"].(string)
			var r piext.RenderResult
			if err := conn.Call(ctx, piext.MethodUIRender, piext.RenderParams{ID: id, Width: 108, Rows: 40}, &r); err != nil {
				return nil, err
			}
			lines = r.Lines
			r = piext.RenderResult{}
			for _, k := range []string{"j", "enter"} {
				if err := conn.Call(ctx, piext.MethodUIInput, piext.InputParams{ID: id, Key: k, Width: 108, Rows: 30}, &r); err != nil {
					return nil, err
				}
			}
			if !r.Done {
				return nil, jsonrpc.ErrMethodNotFound
			}
			return r.Result, nil
		})})
	t.Cleanup(func() {
		conn.Close()
		toExtW.Close()
		<-done
	})
	if err := conn.Call(t.Context(), piext.MethodCommandRun, piext.CommandParams{Command: "demo:panel", CtxID: "1.1", Generation: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-result; got != "2" {
		t.Errorf("result = %s, want 2", got)
	}
	mu.Lock()
	defer mu.Unlock()
	opts, _ := spec["overlayOptions"].(map[string]any)
	if spec["overlay"] != true || opts["width"] != "90%" || opts["maxHeight"] != "20" || opts["anchor"] != "center" {
		t.Errorf("custom spec = %v", spec)
	}
	if len(lines) != 1 || lines[0] != "w=108 keys=0" {
		t.Errorf("render = %q", lines)
	}
	if len(panel.rows) != 3 || panel.rows[0] != 40 || panel.rows[2] != 30 {
		t.Errorf("rows = %v", panel.rows)
	}
}
