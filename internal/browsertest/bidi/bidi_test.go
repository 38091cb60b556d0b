package bidi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pikit-dev/pikit/internal/browsertest/bidi"
	"github.com/pikit-dev/pikit/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// remote is a scripted BiDi remote end: it answers each command by its
// method, sends an event before every answer, and answers "slow" never.
func remote(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, data, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			var cmd struct {
				ID     uint64          `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(data, &cmd) != nil {
				return
			}
			_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"event","method":"log.entryAdded","params":{}}`))
			var answer string
			switch cmd.Method {
			case "echo":
				answer = `{"type":"success","id":` + jsonNum(cmd.ID) + `,"result":{"params":` + string(cmd.Params) + `}}`
			case "fail":
				answer = `{"type":"error","id":` + jsonNum(cmd.ID) + `,"error":"no such frame","message":"gone","stacktrace":""}`
			case "slow":
				continue
			case "hangup":
				return
			}
			_ = ws.Write(r.Context(), websocket.MessageText, []byte(answer))
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func jsonNum(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func TestConn(t *testing.T) {
	ctx := t.Context()
	c, err := bidi.Dial(ctx, remote(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var got struct {
		Params struct{ X int } `json:"params"`
	}
	if err := c.Call(ctx, "echo", map[string]int{"x": 7}, &got); err != nil || got.Params.X != 7 {
		t.Fatalf("echo = %+v, %v", got, err)
	}
	var be *bidi.Error
	if err := c.Call(ctx, "fail", nil, nil); !errors.As(err, &be) || be.Code != "no such frame" || be.Method != "fail" {
		t.Fatalf("fail = %v, want a bidi.Error with its code", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := c.Call(short, "slow", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow = %v, want the context's deadline", err)
	}
	// Concurrent calls each get their own answer.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			var r struct {
				Params struct{ X int } `json:"params"`
			}
			err := c.Call(ctx, "echo", map[string]int{"x": i}, &r)
			if err == nil && r.Params.X != i {
				err = errors.New("crossed answers")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Call(ctx, "hangup", nil, nil); !errors.Is(err, bidi.ErrClosed) {
		t.Fatalf("hangup = %v, want ErrClosed", err)
	}
	<-c.Done()
	if err := c.Call(ctx, "echo", nil, nil); !errors.Is(err, bidi.ErrClosed) {
		t.Fatalf("after the end = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close after the remote end closed: %v", err)
	}
}
