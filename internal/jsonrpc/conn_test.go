package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

func pair(t *testing.T, a, b *jsonrpc.Options) (*jsonrpc.Conn, *jsonrpc.Conn) {
	t.Helper()
	x, y := net.Pipe()
	ca, cb := jsonrpc.NewConn(x, a), jsonrpc.NewConn(y, b)
	t.Cleanup(func() {
		ca.Close()
		cb.Close()
	})
	return ca, cb
}

func handler(f func(ctx context.Context, req *jsonrpc.Request) (any, error)) *jsonrpc.Options {
	return &jsonrpc.Options{Handler: jsonrpc.HandlerFunc(f)}
}

func TestConn_CallBothWaysAndCallBackFromHandler(t *testing.T) {
	var b *jsonrpc.Conn
	a, b := pair(t,
		handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			return map[string]string{"from": "a", "method": req.Method}, nil
		}),
		handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			// A handler that calls back into the peer while its own call is
			// pending: must not deadlock either read loop.
			var inner map[string]string
			if err := b.Call(ctx, "inner", nil, &inner); err != nil {
				return nil, err
			}
			return map[string]string{"inner": inner["method"]}, nil
		}))
	ctx := t.Context()
	var got map[string]string
	if err := a.Call(ctx, "outer", map[string]int{"n": 1}, &got); err != nil {
		t.Fatal(err)
	}
	if got["inner"] != "inner" {
		t.Errorf("got %v, want inner=inner", got)
	}
	if err := b.Call(ctx, "direct", nil, &got); err != nil || got["from"] != "a" {
		t.Errorf("b→a call = %v, %v", got, err)
	}
}

func TestConn_ErrorsCompareCodes(t *testing.T) {
	a, _ := pair(t, nil, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case "bad":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "word is required"}
		case "plain":
			return nil, errors.New("boom")
		case "panic":
			panic("handler bug")
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
	}))
	ctx := t.Context()
	for _, tc := range []struct {
		method string
		want   error
		text   string
	}{
		{"bad", jsonrpc.ErrInvalidParams, "word is required"},
		{"plain", jsonrpc.ErrInternal, "boom"},
		{"panic", jsonrpc.ErrInternal, "panicked"},
		{"nope", jsonrpc.ErrMethodNotFound, "no nope"},
	} {
		err := a.Call(ctx, tc.method, nil, nil)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: err = %v, want code of %v with %q", tc.method, err, tc.want, tc.text)
		}
		if errors.Is(err, jsonrpc.ErrParse) {
			t.Errorf("%s: %v matches ErrParse", tc.method, err)
		}
	}
	var nilHandler *jsonrpc.Conn
	nilHandler, _ = pair(t, nil, nil)
	if err := nilHandler.Call(ctx, "x", nil, nil); !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("nil handler: %v", err)
	}
}

func TestConn_CancelReachesPeerHandler(t *testing.T) {
	cancelled := make(chan error, 1)
	started := make(chan struct{})
	a, _ := pair(t, nil, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		close(started)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	}))
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- a.Call(ctx, "slow", nil, nil) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("peer ctx err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("peer handler never saw the cancellation")
	}
}

func TestConn_OrderedMethodsRunOneAtATimeInOrder(t *testing.T) {
	var mu sync.Mutex
	var order []int
	running := 0
	opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		mu.Lock()
		running++
		if running > 1 {
			mu.Unlock()
			return nil, errors.New("two ordered handlers at once")
		}
		mu.Unlock()
		var p struct{ N int }
		_ = json.Unmarshal(req.Params, &p)
		time.Sleep(time.Millisecond) // widen the window for overlap
		mu.Lock()
		order = append(order, p.N)
		running--
		mu.Unlock()
		return nil, nil
	})
	opts.Ordered = func(m string) bool { return m == "hook" }
	a, _ := pair(t, nil, opts)
	// Notifications go out in order on one stream; the peer must run them in
	// that order.
	for i := range 20 {
		if err := a.Notify(t.Context(), "hook", map[string]int{"N": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Call(t.Context(), "hook", map[string]int{"N": 20}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range order {
		if i != n {
			t.Fatalf("order = %v", order)
		}
	}
	if len(order) != 21 {
		t.Fatalf("ran %d, want 21", len(order))
	}
}

// TestConn_InlineNotificationBeforeFollowingResponse: a notification the
// peer wrote before its answer is handled by the time the call returns
// (without Inline it runs on its own goroutine, which may come later).
func TestConn_InlineNotificationBeforeFollowingResponse(t *testing.T) {
	var mu sync.Mutex
	var got []int
	opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var p struct{ N int }
		_ = json.Unmarshal(req.Params, &p)
		mu.Lock()
		got = append(got, p.N)
		mu.Unlock()
		return nil, nil
	})
	opts.Inline = func(m string) bool { return m == "update" }
	var b *jsonrpc.Conn
	a, b := pair(t, opts, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		for i := range 50 {
			if err := b.Notify(ctx, "update", map[string]int{"N": i}); err != nil {
				return nil, err
			}
		}
		return "done", nil
	}))
	for round := range 20 {
		mu.Lock()
		got = nil
		mu.Unlock()
		if err := a.Call(t.Context(), "tool", nil, nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n != 50 {
			t.Fatalf("round %d: %d of 50 updates handled when the call returned", round, n)
		}
	}
}

func TestConn_CloseUnblocksPendingCalls(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	started := make(chan struct{})
	a, _ := pair(t, nil, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		close(started)
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, nil
	}))
	errc := make(chan error, 1)
	go func() { errc <- a.Call(context.Background(), "wait", nil, nil) }()
	<-started // the call is pending: its handler runs on the peer
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("Call = %v, want ErrClosed", err)
	}
	if err := a.Call(context.Background(), "again", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("Call after Close = %v", err)
	}
	<-a.Done()
}

// rawPeer drives a Conn with raw lines: in is what the Conn reads, out what
// it writes.
type rawPeer struct {
	inW  *io.PipeWriter
	outR *io.PipeReader
	lr   *lineReader
}

type lineReader struct {
	buf []byte
	r   io.Reader
}

func (l *lineReader) next() (string, error) {
	for {
		if i := strings.IndexByte(string(l.buf), '\n'); i >= 0 {
			s := string(l.buf[:i])
			l.buf = l.buf[i+1:]
			return s, nil
		}
		b := make([]byte, 64<<10)
		n, err := l.r.Read(b)
		l.buf = append(l.buf, b[:n]...)
		if err != nil && n == 0 {
			return "", err
		}
	}
}

type stream struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (s *stream) Close() error {
	for _, c := range s.closers {
		c.Close()
	}
	return nil
}

func newRaw(t *testing.T, opts *jsonrpc.Options) (*jsonrpc.Conn, *rawPeer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := jsonrpc.NewConn(&stream{inR, outW, []io.Closer{inR, outW}}, opts)
	p := &rawPeer{inW: inW, outR: outR, lr: &lineReader{r: outR}}
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		c.Close()
	})
	return c, p
}

func (p *rawPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := p.inW.Write([]byte(line + "\n")); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func (p *rawPeer) recv(t *testing.T) string {
	t.Helper()
	s, err := p.lr.next()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return s
}

// TestConn_EOFDrainsAnswersInFlight: after the peer's end of input an
// answer in flight is still written; a handler still running when the
// drain window ends has its ctx cancelled exactly then (fake time), and its
// answer is dropped.
func TestConn_EOFDrainsAnswersInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const drain = 300 * time.Millisecond
		release := make(chan struct{})
		started := make(chan string, 2)
		cancelled := make(chan time.Time, 1)
		opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			started <- req.Method
			if req.Method == "forever" {
				<-ctx.Done()
				cancelled <- time.Now()
				return "dropped", nil
			}
			<-release
			return "late", nil
		})
		opts.DrainTimeout = drain
		c, p := newRaw(t, opts)
		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"soon"}`)
		p.send(t, `{"jsonrpc":"2.0","id":2,"method":"forever"}`)
		<-started
		<-started
		p.inW.Close() // EOF while both are in flight
		synctest.Wait()
		eof := time.Now()
		close(release)
		if got, want := p.recv(t), `{"jsonrpc":"2.0","id":1,"result":"late"}`; got != want {
			t.Errorf("answer in flight = %s, want %s", got, want)
		}
		<-c.Done()
		if at := <-cancelled; at.Sub(eof) != drain {
			t.Errorf("the handler still running was cancelled %v after EOF, want at the end of the %v drain window", at.Sub(eof), drain)
		}
		if err := c.Err(); err != nil {
			t.Errorf("Err after clean EOF = %v", err)
		}
		c.Close()
		if line, err := p.lr.next(); err == nil {
			t.Errorf("an answer after the drain window was written: %s", line)
		}
	})
}

func TestConn_BadInputKeepsServing(t *testing.T) {
	opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) { return "ok", nil })
	opts.MaxRecord = 64
	_, p := newRaw(t, opts)
	for _, tc := range []struct{ in, want string }{
		{`not json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: not a JSON object"}}`},
		{`{"jsonrpc":"1.0","id":7,"method":"x"}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 100) + `","method":"x"}`, `{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 100) + `","error":{"code":-32020,"message":"request of 138 bytes exceeds the message limit of 64 bytes"}}`},
		{`{"jsonrpc":"2.0","method":"x","params":["` + strings.Repeat("x", 100) + `"],"id":9}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: jsonl: record too large"}}`},
		{`{"jsonrpc":"2.0","id":8,"method":"x"}`, `{"jsonrpc":"2.0","id":8,"result":"ok"}`},
	} {
		p.send(t, tc.in)
		if got := p.recv(t); got != tc.want {
			t.Errorf("in %.40s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestConn_LargeLine(t *testing.T) {
	// Above jsonl's 1 MB default: the engine's default cap is 256 MiB.
	big := strings.Repeat("a", 2<<20)
	a, _ := pair(t, nil, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var s string
		if err := json.Unmarshal(req.Params, &[]any{&s}); err != nil {
			return nil, err
		}
		return len(s), nil
	}))
	var n int
	if err := a.Call(t.Context(), "len", []string{big}, &n); err != nil || n != len(big) {
		t.Fatalf("len = %d, %v", n, err)
	}
}

func TestConn_ErrAfterCleanEOFThenClose(t *testing.T) {
	c, p := newRaw(t, nil)
	p.inW.Close()
	<-c.Done()
	c.Close()
	if err := c.Err(); err != nil {
		t.Errorf("Err after a clean end of input and Close = %v, want nil", err)
	}
}

// TestConn_MessageCapBothWays: one cap for both directions. An oversized
// request is answered with its id; an oversized answer fails its call; a
// call or a result over the cap is not sent; the connection goes on.
func TestConn_MessageCapBothWays(t *testing.T) {
	const limit = 1 << 10
	big := strings.Repeat("x", 2*limit)
	opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "big" {
			return big, nil
		}
		return "ok", nil
	})
	opts.MaxRecord = limit
	a, _ := pair(t, &jsonrpc.Options{MaxRecord: 1 << 20}, opts)
	ctx := t.Context()
	// a's cap is larger: it sends the oversized request, b answers it by id.
	err := a.Call(ctx, "small", []string{big}, nil)
	if !errors.Is(err, jsonrpc.ErrTooLarge) || !strings.Contains(err.Error(), "request of 2") {
		t.Errorf("oversized request: %v, want ErrTooLarge naming the request", err)
	}
	// b will not send a result over its cap: a gets the error instead.
	if err := a.Call(ctx, "big", nil, nil); !errors.Is(err, jsonrpc.ErrTooLarge) || !strings.Contains(err.Error(), "result of") {
		t.Errorf("oversized result: %v", err)
	}
	var got string
	if err := a.Call(ctx, "small", nil, &got); err != nil || got != "ok" {
		t.Errorf("after: %q %v", got, err)
	}
	b2, _ := pair(t, &jsonrpc.Options{MaxRecord: limit}, nil)
	if err := b2.Call(ctx, "x", []string{big}, nil); !errors.Is(err, jsonrpc.ErrTooLarge) {
		t.Errorf("a call over the sender's cap: %v", err)
	}
}

// TestConn_OversizedAnswerFailsItsCall: an answer over the cap, from a
// peer that does not keep it, fails the call it answers (its id read from
// the line's start) without being buffered.
func TestConn_OversizedAnswerFailsItsCall(t *testing.T) {
	c, p := newRaw(t, &jsonrpc.Options{MaxRecord: 1 << 10})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(t.Context(), "m", nil, nil) }()
	req := p.recv(t)
	if req != `{"jsonrpc":"2.0","id":1,"method":"m"}` {
		t.Fatalf("request %s", req)
	}
	p.send(t, `{"jsonrpc":"2.0","id":1,"result":"`+strings.Repeat("r", 4<<10)+`"}`)
	if err := <-errc; !errors.Is(err, jsonrpc.ErrTooLarge) || !strings.Contains(err.Error(), "answer of 4") {
		t.Fatalf("Call = %v, want ErrTooLarge for the answer", err)
	}
}

// TestConn_HandlerIgnoringCtxIsAbandoned: a handler that ignores its ctx
// (here an ordered one, which holds the worker too) does not hold the
// connection: after EOF, Done closes at the end of the drain window plus
// the grace (fake time), and Close returns; so does a Close while it runs.
func TestConn_HandlerIgnoringCtxIsAbandoned(t *testing.T) {
	for _, end := range []string{"eof", "close"} {
		t.Run(end, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const drain, grace = 300 * time.Millisecond, 100 * time.Millisecond
				release := make(chan struct{})
				started := make(chan struct{})
				opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
					close(started)
					<-release // ctx ignored
					return "never sent", nil
				})
				opts.DrainTimeout, opts.HandlerGrace = drain, grace
				opts.Ordered = func(string) bool { return true }
				c, p := newRaw(t, opts)
				p.send(t, `{"jsonrpc":"2.0","id":1,"method":"stubborn"}`)
				<-started
				t0 := time.Now()
				want := grace
				if end == "eof" {
					p.inW.Close()
					want = drain + grace
					<-c.Done()
				}
				c.Close()
				if got := time.Since(t0); got != want {
					t.Errorf("Close returned %v after the %s, want %v", got, end, want)
				}
				close(release)
				if line, err := p.lr.next(); err == nil {
					t.Errorf("the abandoned handler's answer was written: %s", line)
				}
			})
		})
	}
}

// TestConn_CloseDoesNotWaitForAStuckRead: when closing the stream does not
// interrupt a pending read (a blocking os.Stdin), Close still returns after
// the grace (fake time).
func TestConn_CloseDoesNotWaitForAStuckRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const grace = 100 * time.Millisecond
		inR, inW := io.Pipe()
		c := jsonrpc.NewConn(&stream{inR, io.Discard, nil}, &jsonrpc.Options{HandlerGrace: grace})
		t0 := time.Now()
		c.Close()
		if got := time.Since(t0); got != grace {
			t.Errorf("Close returned after %v, want the %v grace", got, grace)
		}
		inW.Close() // the input ends: the read loop too
		<-c.Done()
	})
}

// TestConn_FailedWriteMeansPeerGone: the first write that fails (the peer
// closed its read end) ends the connection at once, input still open: it
// is logged with its reason, other handlers are cancelled, Done closes and
// Err wraps the write's error.
func TestConn_FailedWriteMeansPeerGone(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	other := make(chan error, 1)
	started := make(chan struct{})
	opts := handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "long" {
			close(started)
			<-ctx.Done()
			other <- ctx.Err()
			return nil, ctx.Err()
		}
		return "answer", nil
	})
	opts.Logger = slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(b)
	}), nil))
	c, p := newRaw(t, opts)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"long"}`)
	<-started
	p.outR.Close()
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"short"}`)
	<-c.Done()
	if err := <-other; !errors.Is(err, context.Canceled) {
		t.Errorf("the other handler's ctx: %v", err)
	}
	if err := c.Err(); !errors.Is(err, io.ErrClosedPipe) || !strings.Contains(err.Error(), "peer gone") {
		t.Errorf("Err = %v, want peer gone wrapping the write's error", err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "peer gone") || !strings.Contains(logged.String(), "closed pipe") {
		t.Errorf("log:\n%s", logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
