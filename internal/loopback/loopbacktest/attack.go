// Package loopbacktest attacks a local HTTP server the way a slowloris
// client does, for the tests of every server built on
// [github.com/pikit-dev/pikit/internal/loopback]: idle keep-alive
// connections, request bodies sent one byte at a time, headers sent one
// byte at a time, while a normal request is made over and over to prove
// the server keeps answering.
package loopbacktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Attack describes one slowloris run. The zero counts open no connection
// of that kind.
type Attack struct {
	// Addr is the server's host:port.
	Addr string
	// Host is the Host header sent; "" means "localhost".
	Host string
	// Path is requested by every kind; "" means "/".
	Path string
	// Idle connections make one GET, read the answer, then stay silent.
	Idle int
	// SlowBodies POST a 1 MB Content-Length and send one body byte every
	// Interval.
	SlowBodies int
	// SlowHeaders send a request line and then one header byte every
	// Interval, never ending the headers.
	SlowHeaders int
	// Interval is the time between dripped bytes; 0 means 2 s.
	Interval time.Duration
	// GiveUp bounds the run: a connection still open after GiveUp counts
	// in [Result.StillOpen]. Required.
	GiveUp time.Duration
	// Probe makes one normal request; Run calls it every ProbeEvery (0
	// means 100 ms) until every attacking connection is closed. Nil makes
	// none.
	Probe      func(ctx context.Context) error
	ProbeEvery time.Duration
}

// Result is what a run measured.
type Result struct {
	// IdleClosed, BodyClosed and HeaderClosed are the longest a connection
	// of each kind stayed open: from its dial (for idle ones, from the end
	// of their one answer) until the server closed it.
	IdleClosed, BodyClosed, HeaderClosed time.Duration
	StillOpen                            int // connections open at GiveUp
	Probes, ProbeFailures                int
	ProbeMax                             time.Duration // slowest successful probe
	FirstProbeErr                        error
}

func (r Result) String() string {
	return fmt.Sprintf("longest open: idle %v, slow body %v, slow header %v; still open %d; probes %d ok of %d (slowest %v)",
		r.IdleClosed.Round(time.Millisecond), r.BodyClosed.Round(time.Millisecond), r.HeaderClosed.Round(time.Millisecond),
		r.StillOpen, r.Probes-r.ProbeFailures, r.Probes, r.ProbeMax.Round(time.Millisecond))
}

// Run opens the connections, waits until the server has closed all of them
// (or GiveUp passes), and probes meanwhile. It returns an error only when
// the attack itself could not be set up (a dial failing, say).
func (a *Attack) Run(ctx context.Context) (Result, error) {
	if a.GiveUp <= 0 {
		return Result{}, errors.New("loopbacktest: GiveUp is required")
	}
	ctx, cancel := context.WithTimeout(ctx, a.GiveUp)
	defer cancel()
	r := &run{Attack: a, ctx: ctx, host: a.Host, path: a.Path, every: a.Interval}
	if r.host == "" {
		r.host = "localhost"
	}
	if r.path == "" {
		r.path = "/"
	}
	if r.every <= 0 {
		r.every = 2 * time.Second
	}
	defer func() {
		for _, c := range r.conns {
			c.Close()
		}
	}()
	if err := r.attack(); err != nil {
		// End the attack begun so far (its connections close at cancel)
		// and wait for its goroutines, which write res.
		cancel()
		r.wg.Wait()
		return Result{}, err
	}
	attacked := make(chan struct{})
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		r.probe(attacked)
	}()
	r.wg.Wait()
	close(attacked)
	<-probeDone
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.res, nil
}

// run is the state of one [Attack.Run]: the attacking connections, the
// goroutines that watch them, and the result they write under mu.
type run struct {
	*Attack
	ctx        context.Context // ends at GiveUp
	host, path string
	every      time.Duration
	dialer     net.Dialer
	conns      []net.Conn
	wg         sync.WaitGroup
	mu         sync.Mutex
	res        Result
}

// attack opens every attacking connection, kind by kind.
func (r *run) attack() error {
	for range r.Idle {
		if err := r.idle(); err != nil {
			return err
		}
	}
	for range r.SlowBodies {
		if err := r.drip(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\nx", r.path, r.host), &r.res.BodyClosed); err != nil {
			return err
		}
	}
	for range r.SlowHeaders {
		if err := r.drip(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nX-Slow: x", r.path, r.host), &r.res.HeaderClosed); err != nil {
			return err
		}
	}
	return nil
}

// dial opens one attacking connection, closed at GiveUp at the latest.
func (r *run) dial() (net.Conn, error) {
	c, err := r.dialer.DialContext(r.ctx, "tcp", r.Addr)
	if err != nil {
		return nil, fmt.Errorf("loopbacktest: dial: %w", err)
	}
	// Close unblocks this connection's reads and writes at GiveUp.
	context.AfterFunc(r.ctx, func() { c.Close() })
	r.conns = append(r.conns, c)
	return c, nil
}

// closedAt records that a connection of kind opened at since was closed
// now, or still open at GiveUp.
func (r *run) closedAt(kind *time.Duration, since time.Time, open bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if open {
		r.res.StillOpen++
		return
	}
	if d := time.Since(since); d > *kind {
		*kind = d
	}
}

// idle opens an idle keep-alive connection: one GET, its answer read,
// then silence until the server closes it.
func (r *run) idle() error {
	c, err := r.dial()
	if err != nil {
		return err
	}
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", r.path, r.host)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("loopbacktest: idle connection's request: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	since := time.Now()
	r.wg.Go(func() {
		_, _ = br.ReadByte() // returns when the server closes, or at GiveUp
		r.closedAt(&r.res.IdleClosed, since, r.ctx.Err() != nil)
	})
	return nil
}

// drip opens a slow connection (a slow body or slow headers): it writes
// first, then one byte every Interval until the write fails; how long it
// stays open is recorded in kind.
func (r *run) drip(first string, kind *time.Duration) error {
	c, err := r.dial()
	if err != nil {
		return err
	}
	since := time.Now()
	r.wg.Go(func() { // writer: one byte every Interval until the write fails
		if _, err := io.WriteString(c, first); err != nil {
			return
		}
		t := time.NewTicker(r.every)
		defer t.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
			}
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
		}
	})
	r.wg.Go(func() { // reader: whatever the server answers, then its close
		_, _ = io.Copy(io.Discard, c) // ends when the server closes, or at GiveUp
		r.closedAt(kind, since, r.ctx.Err() != nil)
	})
	return nil
}

// probe calls Probe every ProbeEvery until attacked is closed or the run
// reaches GiveUp, recording each outcome (a probe GiveUp cut within Slack
// of its start is not one); nothing when Probe is nil.
func (r *run) probe(attacked <-chan struct{}) {
	if r.Probe == nil {
		return
	}
	pe := r.ProbeEvery
	if pe <= 0 {
		pe = 100 * time.Millisecond
	}
	t := time.NewTicker(pe)
	defer t.Stop()
	for {
		t0 := time.Now()
		err := r.Probe(r.ctx)
		if err != nil && r.ctx.Err() != nil && time.Since(t0) <= Slack {
			// The run reached GiveUp as this probe began: what is still
			// open is the attack's result (StillOpen), not a failed normal
			// request. One in flight longer than Slack is a failure.
			return
		}
		r.mu.Lock()
		r.res.Probes++
		if err != nil {
			r.res.ProbeFailures++
			if r.res.FirstProbeErr == nil {
				r.res.FirstProbeErr = err
			}
		} else if d := time.Since(t0); d > r.res.ProbeMax {
			r.res.ProbeMax = d
		}
		r.mu.Unlock()
		select {
		case <-attacked:
			return
		case <-t.C:
		}
	}
}

// Slack is what [Result.Check] allows beyond twice a timeout: time in the
// kernel's accept queue at the connection cap, and a loaded test machine.
const Slack = 2 * time.Second

// Check returns an error when a connection stayed open (at GiveUp), when a
// kind stayed open longer than twice its timeout plus [Slack] (idle:
// the server's idle timeout, body: its read timeout, header: its header
// timeout), or when a probe failed.
func (r Result) Check(idle, body, header time.Duration) error {
	var errs []error
	if r.StillOpen != 0 {
		errs = append(errs, fmt.Errorf("%d attacking connections still open at GiveUp", r.StillOpen))
	}
	for _, k := range []struct {
		name      string
		got, want time.Duration
	}{{"idle keep-alive", r.IdleClosed, idle}, {"slow body", r.BodyClosed, body}, {"slow header", r.HeaderClosed, header}} {
		if k.got > 2*k.want+Slack {
			errs = append(errs, fmt.Errorf("%s connections stayed open %v, want at most 2 × %v + %v", k.name, k.got, k.want, Slack))
		}
	}
	if r.ProbeFailures != 0 {
		errs = append(errs, fmt.Errorf("%d of %d normal requests failed, first: %w", r.ProbeFailures, r.Probes, r.FirstProbeErr))
	}
	return errors.Join(errs...)
}
