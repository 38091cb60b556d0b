package loopback

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// IsStream is the default [Options.Stream]: an upgrade request
// ("Connection: upgrade" with an Upgrade header: WebSocket, as Vite's hot
// reload and Phoenix LiveView use) or one that accepts text/event-stream
// (EventSource sends that Accept header).
func IsStream(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		for _, v := range r.Header.Values("Connection") {
			if strings.Contains(strings.ToLower(v), "upgrade") {
				return true
			}
		}
	}
	for _, a := range r.Header.Values("Accept") {
		if strings.Contains(a, "text/event-stream") {
			return true
		}
	}
	return false
}

// hasBody reports whether r carries a request body.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 || len(r.TransferEncoding) > 0
}

// classify is the handler around the user's: it sets each request's
// deadlines by class before calling next.
type classify struct {
	next    http.Handler
	stream  func(*http.Request) bool
	read    time.Duration
	write   time.Duration
	closing context.Context // done when the server starts closing
}

func (c *classify) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	if !hasBody(r) && c.stream(r) {
		// A keep-alive connection keeps the previous request's write
		// deadline unless it is cleared; the read deadline is already none
		// (net/http clears it after the headers when Server.ReadTimeout
		// is zero), and hijacking keeps it so.
		_ = rc.SetWriteDeadline(time.Time{})
		ctx, cancel := context.WithCancel(r.Context())
		stop := context.AfterFunc(c.closing, cancel)
		defer func() {
			stop()
			cancel()
		}()
		c.next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	now := time.Now()
	_ = rc.SetWriteDeadline(now.Add(c.write))
	if hasBody(r) {
		// The deadline bounds the body only: when the body has been read
		// to its end, net/http lifts it itself (connReader's background
		// read starts with no deadline), so a handler may work on.
		_ = rc.SetReadDeadline(now.Add(c.read))
	}
	c.next.ServeHTTP(w, r)
}

// KeepOpen turns the current request into a stream after it has started:
// it lifts the request's read and write deadlines. Call it from a handler
// that learns late that it streams (a proxied response that turns out to
// be text/event-stream, a long poll). Unlike a request classified by
// [Options.Stream], its context does not end when the server starts
// closing, only when [Server.Close]'s ctx runs out.
func KeepOpen(w http.ResponseWriter) error {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	return rc.SetWriteDeadline(time.Time{})
}
