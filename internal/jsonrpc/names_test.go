package jsonrpc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
)

// A result is read into the caller's type with exact member names: a
// case variant the peer's JavaScript would not read is not the member.
func TestConn_ResultExactNames(t *testing.T) {
	c, p := newRaw(t, nil)
	type out struct {
		Value string `json:"value"`
	}
	for _, tc := range []struct{ result, want string }{
		{`{"value":"a"}`, "a"},
		{`{"VALUE":"a"}`, ""},
		{`{"value":"a","Value":"b"}`, "a"},
	} {
		errc := make(chan error, 1)
		var got out
		go func() { errc <- c.Call(t.Context(), "m", nil, &got) }()
		req := p.recv(t)
		id := req[strings.Index(req, `"id":`)+5 : strings.Index(req, `,"method"`)]
		p.send(t, `{"jsonrpc":"2.0","id":`+id+`,"result":`+tc.result+`}`)
		if err := <-errc; err != nil || got.Value != tc.want {
			t.Errorf("result %s: %q, %v; want %q", tc.result, got.Value, err, tc.want)
		}
	}
}

// $/cancelRequest names the request by "id" exactly: {"ID":1} cancels
// nothing.
func TestConn_CancelExactNames(t *testing.T) {
	started := make(chan context.Context, 1)
	c, p := newRaw(t, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "slow" {
			started <- ctx
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return "ok", nil
	}))
	_ = c
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	slow := <-started
	p.send(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"ID":1}}`)
	// The probe is read after the cancel notice; its answer means the
	// notice was handled.
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"probe"}`)
	if got := p.recv(t); got != `{"jsonrpc":"2.0","id":2,"result":"ok"}` {
		t.Fatalf("probe answer %s", got)
	}
	if slow.Err() != nil {
		t.Fatal(`{"ID":1} cancelled request 1`)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	select {
	case <-slow.Done():
	case <-time.After(5 * time.Second):
		t.Fatal(`{"id":1} did not cancel request 1`)
	}
	p.recv(t) // request 1's answer
}
