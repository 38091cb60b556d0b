package loopback

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// capListener caps the open connections it has accepted. A connection
// counts from Accept until its Close (hijacked connections included). At
// the cap, Accept displaces the oldest connection that is not inside a
// request (idle keep-alive, or still sending its headers, as reported by
// the server's ConnState hook; see oldestIdleLocked); when there is none
// it waits for a connection to close, or for the listener to close. Safe for concurrent
// use.
type capListener struct {
	net.Listener
	max int

	mu     sync.Mutex
	conns  map[*capConn]connInfo
	freed  chan struct{} // signalled (non-blocking) when a connection closes
	closed chan struct{} // closed by Close
	once   sync.Once
}

// connInfo is what the cap needs to know about one open connection.
type connInfo struct {
	state http.ConnState
	since time.Time // when state was entered
}

func newCapListener(ln net.Listener, max int) *capListener {
	return &capListener{
		Listener: ln,
		max:      max,
		conns:    make(map[*capConn]connInfo),
		freed:    make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
}

// Accept returns the next connection once it fits under the cap.
func (l *capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if len(l.conns) < l.max {
			cc := &capConn{Conn: c, l: l}
			l.conns[cc] = connInfo{state: http.StateNew, since: time.Now()}
			l.mu.Unlock()
			return cc, nil
		}
		victim, retry := l.oldestIdleLocked()
		l.mu.Unlock()
		if victim != nil {
			victim.Close() // frees its slot before returning
			continue
		}
		if !l.wait(retry) {
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// wait blocks until a connection closes, retry comes (if not zero) or the
// listener closes; it reports false for the last.
func (l *capListener) wait(retry time.Time) bool {
	var wake <-chan time.Time
	if !retry.IsZero() {
		t := time.NewTimer(time.Until(retry))
		defer t.Stop()
		wake = t.C
	}
	select {
	case <-l.freed:
	case <-wake:
	case <-l.closed:
		return false
	}
	return true
}

// newConnGrace is how long a new connection may take to send its first
// request's headers before it can be displaced at the cap: a browser sends
// them at once, a slowloris client never finishes.
const newConnGrace = 500 * time.Millisecond

// oldestIdleLocked returns the connection to displace: the longest idle
// keep-alive connection, else the oldest one that has been sending its
// first headers for over newConnGrace; nil when there is none (every
// connection is inside a request or a stream, or has just connected), and
// then the time the first connection in its grace may be displaced (zero
// when none is).
func (l *capListener) oldestIdleLocked() (victim *capConn, retry time.Time) {
	graceEnd := time.Now().Add(-newConnGrace)
	var idle, fresh *capConn
	var idleSince, freshSince time.Time
	for c, info := range l.conns {
		switch info.state {
		case http.StateIdle:
			if idle == nil || info.since.Before(idleSince) {
				idle, idleSince = c, info.since
			}
		case http.StateNew:
			if info.since.After(graceEnd) {
				if at := info.since.Add(newConnGrace); retry.IsZero() || at.Before(retry) {
					retry = at
				}
				continue
			}
			if fresh == nil || info.since.Before(freshSince) {
				fresh, freshSince = c, info.since
			}
		}
	}
	if idle != nil {
		return idle, time.Time{}
	}
	if fresh != nil {
		return fresh, time.Time{}
	}
	return nil, retry
}

// setState records the server's view of c (http.Server.ConnState).
func (l *capListener) setState(c net.Conn, state http.ConnState) {
	cc, ok := c.(*capConn)
	if !ok {
		return
	}
	l.mu.Lock()
	if _, open := l.conns[cc]; open {
		l.conns[cc] = connInfo{state: state, since: time.Now()}
	}
	l.mu.Unlock()
}

func (l *capListener) release(c *capConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// open returns the number of open connections.
func (l *capListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// closeAll closes every open connection (hijacked ones too).
func (l *capListener) closeAll() {
	l.mu.Lock()
	cs := make([]*capConn, 0, len(l.conns))
	for c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

// Close closes the listener and unblocks a waiting Accept.
func (l *capListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// capConn is one counted connection; its first Close frees the slot.
type capConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
