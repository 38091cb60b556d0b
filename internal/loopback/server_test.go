package loopback_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/internal/loopback/loopbacktest"
)

// start serves h with opts and closes the server when the test ends.
func start(t *testing.T, h http.Handler, opts *loopback.Options) *loopback.Server {
	t.Helper()
	s := loopback.New(h, opts)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// get makes one request on a fresh connection and returns the body.
func get(ctx context.Context, addr string) (string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		http.Error(w, "slow body", http.StatusRequestTimeout)
		return
	}
	io.WriteString(w, "ok")
})

func TestServer_StartClose(t *testing.T) {
	s := loopback.New(okHandler, nil)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() || addr.Port == 0 {
		t.Errorf("default address %v, want a loopback port", addr)
	}
	if got, err := get(t.Context(), addr.String()); err != nil || got != "ok" {
		t.Fatalf("get = %q, %v", got, err)
	}
	if err := s.Start(t.Context()); err == nil {
		t.Error("second Start succeeded")
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("second Close = %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if _, err := get(t.Context(), addr.String()); err == nil {
		t.Error("request after Close succeeded")
	}
}

func TestServer_CloseBeforeStart(t *testing.T) {
	s := loopback.New(okHandler, nil)
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := s.Start(t.Context()); err == nil {
		t.Error("Start after Close succeeded")
	}
}

func TestNew_PanicsOnNegative(t *testing.T) {
	for _, o := range []loopback.Options{{ReadTimeout: -1}, {IdleTimeout: -1}, {MaxConns: -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%+v) did not panic", o)
				}
			}()
			loopback.New(okHandler, &o)
		}()
	}
}

func TestServe_StopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	ready := make(chan net.Addr, 1)
	go func() { errc <- loopback.Serve(ctx, okHandler, nil, func(a net.Addr) { ready <- a }) }()
	addr := <-ready
	if got, err := get(t.Context(), addr.String()); err != nil || got != "ok" {
		t.Fatalf("get = %q, %v", got, err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestServer_Slowloris is the attack of the package doc: idle keep-alive
// connections, bodies and headers sent a byte every 2 s, more connections
// than the cap, while a normal request is made every 100 ms.
func TestServer_Slowloris(t *testing.T) {
	if testing.Short() {
		t.Skip("slowloris takes about 5 s")
	}
	opts := &loopback.Options{
		ReadHeaderTimeout: 2 * time.Second,
		ReadTimeout:       3 * time.Second,
		WriteTimeout:      3 * time.Second,
		IdleTimeout:       2 * time.Second,
		MaxConns:          150,
	}
	s := start(t, okHandler, opts)
	res := slowloris(t, s.Addr().String(), "localhost", func(ctx context.Context) error {
		_, err := get(ctx, s.Addr().String())
		return err
	})
	checkSlowloris(t, res, opts)
	if n := s.Conns(); n > 1 {
		t.Errorf("%d connections open after the attack", n)
	}
}

// slowloris runs 100 idle, 100 slow-body and 60 slow-header connections
// (260, over a cap of 150) against addr.
func slowloris(t *testing.T, addr, host string, probe func(context.Context) error) loopbacktest.Result {
	t.Helper()
	a := &loopbacktest.Attack{
		Addr: addr, Host: host, Idle: 100, SlowBodies: 100, SlowHeaders: 60,
		Interval: 2 * time.Second, GiveUp: 20 * time.Second, Probe: probe,
	}
	res, err := a.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slowloris: %v", res)
	return res
}

func checkSlowloris(t *testing.T, res loopbacktest.Result, o *loopback.Options) {
	t.Helper()
	if res.Probes == 0 {
		t.Error("no normal request was made during the attack")
	}
	if err := res.Check(o.IdleTimeout, o.ReadTimeout, o.ReadHeaderTimeout); err != nil {
		t.Error(err)
	}
}

func TestServer_CapDisplacesIdle(t *testing.T) {
	s := start(t, okHandler, &loopback.Options{MaxConns: 3, IdleTimeout: time.Minute})
	var idle []*bufio.Reader
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		br := bufio.NewReader(c)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		idle = append(idle, br)
	}
	if n := s.Conns(); n != 3 {
		t.Fatalf("Conns = %d, want 3", n)
	}
	if got, err := get(t.Context(), s.Addr().String()); err != nil || got != "ok" {
		t.Fatalf("request at the cap = %q, %v", got, err)
	}
	// An idle connection made room (the oldest one the server had seen
	// go idle): the first of them to end does so now, not after the
	// minute of IdleTimeout.
	ended := make(chan int, 3)
	for i, br := range idle {
		go func() {
			br.ReadByte()
			ended <- i
		}()
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("no idle connection was closed to make room")
	}
	for _, c := range conns {
		c.Close()
	}
	for range 2 {
		<-ended
	}
}

func TestServer_CapWaitsWhenAllBusy(t *testing.T) {
	release := make(chan struct{})
	var entered atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		<-release
		io.WriteString(w, "ok")
	})
	s := start(t, h, &loopback.Options{MaxConns: 2})
	errc := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := get(t.Context(), s.Addr().String())
			errc <- err
		}()
	}
	for entered.Load() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.Conns(); n != 2 {
		t.Errorf("Conns with two busy requests and one waiting = %d, want 2", n)
	}
	close(release)
	for range 3 {
		if err := <-errc; err != nil {
			t.Errorf("request: %v", err)
		}
	}
	if n := entered.Load(); n != 3 {
		t.Errorf("handler entered %d times, want 3", n)
	}
}

// TestServer_StreamOutlivesTimeouts holds an event stream, on a keep-alive
// connection whose previous request set a write deadline, for three times
// every timeout; the stream ends only when the server closes.
func TestServer_StreamOutlivesTimeouts(t *testing.T) {
	const tick = 100 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopback.IsStream(r) {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		t := time.NewTicker(tick)
		defer t.Stop()
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
			}
		}
	})
	const timeout = 300 * time.Millisecond
	s := loopback.New(h, &loopback.Options{ReadHeaderTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout})
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	io.WriteString(c, "GET /events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	began := time.Now()
	events := 0
	for time.Since(began) < 3*timeout && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events++
		}
	}
	if time.Since(began) < 3*timeout {
		t.Fatalf("stream ended after %v and %d events: %v", time.Since(began), events, sc.Err())
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	for sc.Scan() {
	}
	if err := <-closed; err != nil {
		t.Errorf("Close with an open stream = %v", err)
	}
}

// TestServer_BodyDeadlineEndsWithBody: the read deadline bounds the body
// only. A handler that has read its body and then works past ReadTimeout
// keeps its context and can still answer.
func TestServer_BodyDeadlineEndsWithBody(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "context ended", http.StatusServiceUnavailable)
			return
		case <-time.After(3 * readTimeout):
		}
		io.WriteString(w, "ok")
	})
	s := start(t, h, &loopback.Options{ReadTimeout: readTimeout, WriteTimeout: 10 * time.Second})
	resp, err := http.Post("http://"+s.Addr().String()+"/", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Errorf("answer after working past ReadTimeout = %d %q, want 200 ok", resp.StatusCode, b)
	}
}

// TestKeepOpen: a handler that learns late that it streams lifts its
// deadlines and writes past WriteTimeout.
func TestKeepOpen(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("keep=", keep), func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if keep {
					if err := loopback.KeepOpen(w); err != nil {
						t.Errorf("KeepOpen: %v", err)
					}
				}
				io.WriteString(w, "one\n")
				http.NewResponseController(w).Flush()
				select {
				case <-time.After(3 * timeout):
				case <-r.Context().Done():
				}
				io.WriteString(w, "two\n")
			})
			s := start(t, h, &loopback.Options{WriteTimeout: timeout})
			resp, err := http.Get("http://" + s.Addr().String() + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			// Without KeepOpen the write deadline cuts the second line:
			// that is the deadline this test must see lifted.
			if got := string(b) == "one\ntwo\n"; got != keep {
				t.Errorf("body %q; complete = %v, want %v", b, got, keep)
			}
		})
	}
}

// TestServer_UnparsableRequest pins the documented decision: a request
// net/http cannot parse never reaches the handler and gets Go's
// plain-text 400, then the connection closes.
func TestServer_UnparsableRequest(t *testing.T) {
	var called atomic.Int32
	s := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called.Add(1) }), nil)
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /%E0%A4%A HTTP/1.1\r\nHost: localhost\r\n\r\n")
	raw, err := io.ReadAll(c) // ends when the server closes
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || called.Load() != 0 {
		t.Errorf("status %d, Content-Type %q, handler called %d times; want 400, text/plain, 0", resp.StatusCode, resp.Header.Get("Content-Type"), called.Load())
	}
}
