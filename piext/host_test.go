package piext_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/install"
)

// Extra files are written beside the bridge (0600, sub folders 0700),
// listed with their absolute paths, dropped when a reinstall no longer
// has them, and removed by uninstall.
func TestInstall_ExtraFiles(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(t.TempDir(), "ext")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	ext := &piext.Extension{Name: "demo", Files: map[string]string{"api.ts": "export const a = 1;\n", "lib/host.ts": "export default () => ({});\n"},
		Host: &piext.HostSpec{File: "lib/host.ts", Symbol: "demo.host/1"}}
	o := install.Options{Dir: dir, Command: []string{exe}, Manifest: ext.Manifest()}
	folder, err := install.Write(o)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range ext.Files {
		b, err := os.ReadFile(filepath.Join(folder, filepath.FromSlash(p)))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", p, b, err)
		}
	}
	list, err := install.List(dir)
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if d := cmp.Diff(map[string]string{"api.ts": filepath.Join(folder, "api.ts"), "lib/host.ts": filepath.Join(folder, "lib", "host.ts")}, list[0].InstalledFiles()); d != "" {
		t.Errorf("installed files (-want +got):\n%s", d)
	}
	in, _ := install.Read(folder)
	if in.Manifest.Host == nil || in.Manifest.Host.Symbol != "demo.host/1" {
		t.Errorf("piext.json host = %+v", in.Manifest.Host)
	}
	// Reinstall without api.ts drops it.
	ext.Files = map[string]string{"lib/host.ts": ext.Files["lib/host.ts"]}
	o.Manifest = ext.Manifest()
	if _, err := install.Write(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(folder, "api.ts")); !os.IsNotExist(err) {
		t.Errorf("stale api.ts kept: %v", err)
	}
	if err := install.Uninstall(dir, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("folder left after uninstall: %v", err)
	}
}

// Manifest refuses files install owns or paths that leave the folder, and
// a host whose file is not among Files.
func TestManifest_RefusesBadFiles(t *testing.T) {
	for _, c := range []struct {
		files map[string]string
		host  *piext.HostSpec
	}{
		{files: map[string]string{"index.ts": ""}},
		{files: map[string]string{"../x.ts": ""}},
		{files: map[string]string{"skills/x.ts": ""}},
		{files: map[string]string{"a//b.ts": ""}},
		{files: map[string]string{"run.sh": ""}},
		{files: map[string]string{"a.ts": ""}, host: &piext.HostSpec{File: "b.ts", Symbol: "s"}},
		{files: map[string]string{"a.ts": ""}, host: &piext.HostSpec{File: "a.ts"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("files %v host %+v accepted", c.files, c.host)
				}
			}()
			(&piext.Extension{Name: "demo", Files: c.files, Host: c.host}).Manifest()
		}()
	}
}

// CallHost sends host/call bound like pi/call, returns the value and maps
// the bridge's refusal of a thenable to ErrNotSynchronous; a replaced
// session fails before anything is sent.
func TestServe_CallHost(t *testing.T) {
	var (
		mu   sync.Mutex
		sent []piext.HostCallParams
	)
	var later *piext.Pi
	ext := &piext.Extension{Name: "demo", Tools: []piext.Tool{{Name: "t", Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
		later = c.Pi.Session()
		v, err := c.Pi.CallHost(ctx, "demo.host/1", "sum", 1, 2)
		if err != nil {
			return nil, err
		}
		_, err = c.Pi.CallHost(ctx, "demo.host/1", "promise")
		if !errors.Is(err, piext.ErrNotSynchronous) {
			return nil, errors.New("promise: " + errString(err))
		}
		return &piext.ToolResult{Content: []piext.Content{piext.Text(string(v))}}, nil
	}}}}
	conn := serveHostFake(t, ext, func(p piext.HostCallParams) (any, error) {
		mu.Lock()
		sent = append(sent, p)
		mu.Unlock()
		if p.Fn == "promise" {
			return nil, &jsonrpc.Error{Code: piext.CodeNotSynchronous, Message: "returned a promise"}
		}
		return 3, nil
	})
	bind := func(gen uint64) {
		if err := conn.Call(t.Context(), piext.MethodSessionBind, piext.BindParams{Generation: gen, SessionID: "s", Cwd: "/p"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	bind(1)
	var res piext.ToolResult
	if err := conn.Call(t.Context(), piext.MethodToolExecute, piext.ToolParams{Tool: "t", ToolCallID: "c1", CtxID: "1.1", Generation: 1, Params: json.RawMessage(`{}`)}, &res); err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].Text != "3" {
		t.Fatalf("result = %+v", res)
	}
	mu.Lock()
	if len(sent) != 2 || sent[0].CtxID != "1.1" || sent[0].Symbol != "demo.host/1" || len(sent[0].Args) != 2 {
		t.Errorf("sent = %+v", sent)
	}
	mu.Unlock()
	bind(2)
	if _, err := later.CallHost(t.Context(), "demo.host/1", "sum"); !errors.Is(err, piext.ErrStaleSession) {
		t.Errorf("stale handle: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// serveHostFake serves ext in-process and answers its host/call requests
// with onHost, playing the bridge's side.
func serveHostFake(t testing.TB, ext *piext.Extension, onHost func(piext.HostCallParams) (any, error)) *jsonrpc.Conn {
	t.Helper()
	toExtR, toExtW := io.Pipe()
	fromExtR, fromExtW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- piext.Serve(context.Background(), ext, toExtR, fromExtW) }()
	conn := jsonrpc.NewConn(&rw{fromExtR, toExtW, []io.Closer{fromExtR, toExtW}}, &jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == piext.MethodPiCall {
				return "pi", nil // the baseline of BenchmarkCallHost
			}
			if req.Method != piext.MethodHostCall {
				return nil, jsonrpc.ErrMethodNotFound
			}
			var p piext.HostCallParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, err
			}
			return onHost(p)
		})})
	t.Cleanup(func() {
		conn.Close()
		toExtW.Close()
		<-done
	})
	return conn
}

// BenchmarkCallHost times one Go → bridge host/call round trip over an
// in-process pipe against pi/call (the baseline: the reverse call every
// piext extension already makes) in the same run; the ratio is the added
// cost of the host mechanism's marshalling.
//
//	go test -run XX -bench CallHost -benchmem ./piext/
func BenchmarkCallHost(b *testing.B) {
	var pi *piext.Pi
	ready := make(chan struct{})
	block := make(chan struct{})
	ext := &piext.Extension{Name: "demo", Tools: []piext.Tool{{Name: "t", Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
		pi = c.Pi
		close(ready)
		<-block
		return &piext.ToolResult{}, nil
	}}}}
	conn := serveHostFake(b, ext, func(p piext.HostCallParams) (any, error) { return "host", nil })
	if err := conn.Call(b.Context(), piext.MethodSessionBind, piext.BindParams{Generation: 1, SessionID: "s", Cwd: "/p"}, nil); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- conn.Call(context.Background(), piext.MethodToolExecute, piext.ToolParams{Tool: "t", ToolCallID: "c", CtxID: "1.1", Generation: 1, Params: json.RawMessage(`{}`)}, nil)
	}()
	<-ready
	args := []any{map[string]any{"host": 1, "generation": 2}, "x_acme_notes", map[string]any{"entries": []any{"accepted"}}}
	b.Run("pi-call-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := pi.Call(b.Context(), "session", "getLeafId", args...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("host-call", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := pi.CallHost(b.Context(), "pikit.stateflow.host/1", "validate", args...); err != nil {
				b.Fatal(err)
			}
		}
	})
	close(block)
	<-done
}
