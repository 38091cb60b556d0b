// Package inject adds the taskbar bootstrap to the HTML pages a handler
// serves, and leaves every other response exactly as the handler wrote it.
//
// # What is injected where
//
// The bootstrap snippet (stylesheet link, bootstrap element, script; reference
// taskbar.md §10) goes in front of the first `</body>` end tag, else in front of
// the first `</html>` end tag, else at the end of the document. Markers inside
// comments, tags and raw text (script, style, textarea, title, ...) do not count.
// A response that does not look like a whole document (no doctype and no html,
// head or body start tag: an htmx or Turbo frame fragment) is left alone, so a
// fragment never carries a second bootstrap.
//
// # Frames
//
// A page requested for a frame gets nothing: the top-level document already
// has the taskbar, and a second one inside an iframe would poll on its own
// and capture the frame as if it were the whole page. The request says what
// it is for: browsers send `Sec-Fetch-Dest: iframe` (or frame, embed, object,
// fencedframe) when loading a frame's document ([FrameRequest]). Requests
// without the header (older browsers, tools) count as top-level documents.
// Rewritten pages carry `Vary: Sec-Fetch-Dest`, so a cache never hands the
// injected page to a frame.
//
// # What is left alone
//
// Only responses whose Content-Type is text/html (or, with no Content-Type, that
// sniff as text/html) are candidates. These pass through byte for byte:
// HEAD requests, 1xx, 204, 206 and 304 responses, responses with Content-Range,
// and responses with a Content-Encoding other than identity (the proxy asks its
// upstream for identity encoding instead). Hijack works on responses that are
// not being rewritten, so WebSocket upgrades behind the middleware keep working.
//
// # Length and streaming
//
// A page is held in memory until the handler returns (up to
// [Middleware.MaxBuffer]), and then sent with a corrected Content-Length. When
// the handler flushes, or the page outgrows the buffer, the middleware switches
// to streaming: it drops Content-Length, sends what it has, and from then on
// passes every write and flush straight through, still inserting the snippet
// when the marker goes by (holding back at most 7 bytes of a possible marker).
// Validators (ETag, Last-Modified) are removed from rewritten pages, because
// the body is no longer the one they describe.
//
// # Example
//
//	m := &inject.Middleware{Snippet: func(w http.ResponseWriter, r *http.Request) []byte {
//		return []byte(`<script src="/dev/pi-browser-taskbar/assets/client.js" defer></script>`)
//	}}
//	http.ListenAndServe("127.0.0.1:8080", m.Handler(app))
package inject

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// DefaultMaxBuffer is the page size up to which a page is held and sent with
// an exact Content-Length (bytes).
const DefaultMaxBuffer = 1 << 20

// Middleware injects a snippet into HTML pages. Its zero value injects
// nothing. It is safe for concurrent use; fields must not change after the
// first call to [Middleware.Handler].
type Middleware struct {
	// Snippet returns the HTML to insert into one page. It is called at most
	// once per response, after the wrapped handler chose the status and
	// headers and before they are sent, so it may add headers (a CSRF cookie)
	// through w.Header(); writes to w are refused. Nil, or an empty result,
	// leaves the response untouched.
	Snippet func(w http.ResponseWriter, r *http.Request) []byte

	// MaxBuffer is the largest page (bytes) held in memory to send with an
	// exact Content-Length. Zero means [DefaultMaxBuffer]; negative means
	// stream every page at once (no Content-Length).
	MaxBuffer int

	bufs sync.Pool // *bytes.Buffer, reused across pages
}

// Handler returns h wrapped so that its HTML pages receive the snippet.
func (m *Middleware) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if m.Snippet == nil || r.Method == http.MethodHead || FrameRequest(r) {
			h.ServeHTTP(rw, r)
			return
		}
		w := &writer{rw: rw, r: r, m: m, sc: newScanner()}
		defer w.release()
		h.ServeHTTP(w, r)
		if err := w.finish(); err != nil {
			// The client went away or the handler broke the framing;
			// there is nobody left to tell.
			return
		}
	})
}

func (m *Middleware) maxBuffer() int {
	switch {
	case m.MaxBuffer == 0:
		return DefaultMaxBuffer
	case m.MaxBuffer < 0:
		return 0
	}
	return m.MaxBuffer
}

// FrameRequest reports whether r asks for a document to show inside a
// frame (Sec-Fetch-Dest iframe, frame, embed, object or fencedframe), which
// gets no taskbar (see "Frames" in the package doc). The proxy calls it
// through [Middleware.Handler].
func FrameRequest(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Dest") {
	case "iframe", "frame", "embed", "object", "fencedframe":
		return true
	}
	return false
}

// IsHTML reports whether a Content-Type header value names an HTML document.
func IsHTML(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/html"
}

// Injectable reports whether a response with this request method, status and
// header may be rewritten (ignoring its Content-Type). It is the rule of the
// package doc, shared with the proxy.
func Injectable(method string, status int, h http.Header) bool {
	if method == http.MethodHead {
		return false
	}
	switch {
	case status < 200, status == http.StatusNoContent, status == http.StatusPartialContent,
		status == http.StatusNotModified:
		return false
	}
	if h.Get("Content-Range") != "" {
		return false
	}
	if ce := h.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return false
	}
	return true
}

type mode uint8

const (
	modeUndecided mode = iota
	modePass           // not rewritten: every call goes straight to rw
	modeBuffer         // HTML being held in buf
	modeStream         // HTML headers sent; writes scanned and passed on
)

type writer struct {
	rw      http.ResponseWriter
	r       *http.Request
	m       *Middleware
	mode    mode
	status  int
	snippet []byte
	sc      scanner
	// held are bytes of a possible marker not yet passed on.
	held     []byte
	injected bool
	buf      *bytes.Buffer
	err      error
}

var (
	_ http.ResponseWriter = (*writer)(nil)
	_ http.Flusher        = (*writer)(nil)
	_ http.Hijacker       = (*writer)(nil)
)

func (w *writer) Header() http.Header { return w.rw.Header() }

// Unwrap lets http.ResponseController reach deadlines on the real writer.
func (w *writer) Unwrap() http.ResponseWriter { return w.rw }

func (w *writer) WriteHeader(status int) {
	if w.mode != modeUndecided {
		if w.mode == modePass {
			w.rw.WriteHeader(status) // let net/http report the superfluous call
		}
		return
	}
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		w.rw.WriteHeader(status) // informational: stays undecided
		return
	}
	w.decide(status, nil)
}

func (w *writer) decide(status int, first []byte) {
	h := w.rw.Header()
	ct := h.Get("Content-Type")
	if ct == "" && first != nil && h.Get("X-Content-Type-Options") != "nosniff" {
		// What net/http would send anyway; set it so our decision and the
		// client agree.
		ct = http.DetectContentType(first)
		h.Set("Content-Type", ct)
	}
	w.status = status
	if !IsHTML(ct) || !Injectable(w.r.Method, status, h) || h.Get("Trailer") != "" {
		w.mode = modePass
		w.rw.WriteHeader(status)
		return
	}
	w.snippet = w.m.Snippet(headerOnly{w.rw}, w.r)
	if len(w.snippet) == 0 {
		w.mode = modePass
		w.rw.WriteHeader(status)
		return
	}
	h.Del("ETag")
	h.Del("Last-Modified")
	h.Add("Vary", "Sec-Fetch-Dest")
	if w.m.maxBuffer() == 0 {
		w.startStream()
		return
	}
	w.mode = modeBuffer
	w.buf = w.m.getBuffer()
}

func (w *writer) Write(p []byte) (int, error) {
	if w.mode == modeUndecided {
		w.decide(http.StatusOK, p)
	}
	switch w.mode {
	case modePass:
		return w.rw.Write(p)
	case modeBuffer:
		if w.buf.Len()+len(p) > w.m.maxBuffer() {
			w.startStream()
			break
		}
		w.scan(p)
		return len(p), nil
	}
	if w.err != nil {
		return 0, w.err
	}
	w.scan(p)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// startStream sends the headers without Content-Length and what is buffered.
func (w *writer) startStream() {
	w.rw.Header().Del("Content-Length")
	w.rw.WriteHeader(w.status)
	w.mode = modeStream
	if w.buf != nil {
		if w.buf.Len() > 0 {
			_, w.err = w.rw.Write(w.buf.Bytes())
		}
		w.m.putBuffer(w.buf)
		w.buf = nil
	}
}

func (m *Middleware) getBuffer() *bytes.Buffer {
	if b, ok := m.bufs.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

func (m *Middleware) putBuffer(b *bytes.Buffer) {
	if b.Cap() <= 4*DefaultMaxBuffer {
		m.bufs.Put(b)
	}
}

// emit passes rewritten bytes on to the buffer or the client.
func (w *writer) emit(p []byte) {
	if len(p) == 0 || w.err != nil {
		return
	}
	if w.mode == modeBuffer {
		w.buf.Write(p)
		return
	}
	_, w.err = w.rw.Write(p)
}

// scan feeds p through the scanner and emits everything that cannot be part
// of a marker, with the snippet in front of the marker once found.
func (w *writer) scan(p []byte) {
	if w.injected {
		w.emit(p)
		return
	}
	start := w.sc.pos - int64(len(w.held)) // stream offset of held[0]
	w.sc.feed(p)
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
	}
	w.held = w.held[:0]
	switch {
	case w.sc.found >= 0:
		at := int(w.sc.found - start)
		w.emit(data[:at])
		w.emit(w.snippet)
		w.emit(data[at:])
		w.injected = true
	case w.sc.cand >= 0:
		at := int(w.sc.cand - start)
		w.emit(data[:at])
		w.held = append(w.held[:0], data[at:]...)
	default:
		w.emit(data)
	}
}

func (w *writer) Flush() {
	_ = w.FlushError()
}

// FlushError is what http.ResponseController.Flush calls.
func (w *writer) FlushError() error {
	switch w.mode {
	case modeUndecided:
		w.decide(http.StatusOK, nil)
		if w.mode == modePass {
			return http.NewResponseController(w.rw).Flush()
		}
		fallthrough
	case modeBuffer:
		w.startStream()
	case modePass:
		return http.NewResponseController(w.rw).Flush()
	}
	// A possible marker split across this flush is given up on: the client
	// must see everything written so far.
	if len(w.held) > 0 {
		held := w.held
		w.held = nil
		w.sc.cand = -1
		w.emit(held)
	}
	if w.err != nil {
		return w.err
	}
	return http.NewResponseController(w.rw).Flush()
}

// Hijack hands the connection over when the response is not being
// rewritten (WebSocket upgrades, CONNECT).
func (w *writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.mode == modeBuffer || w.mode == modeStream {
		return nil, nil, errors.New("inject: hijack of a rewritten HTML response")
	}
	w.mode = modePass
	return http.NewResponseController(w.rw).Hijack()
}

// finish completes the response after the handler returned.
func (w *writer) finish() error {
	switch w.mode {
	case modeUndecided, modePass:
		return nil
	}
	if !w.injected {
		w.emit(w.held)
		w.held = nil
		if w.sc.sawDocument {
			w.emit(w.snippet)
			w.injected = true
		}
	}
	if w.mode == modeStream {
		return w.err
	}
	h := w.rw.Header()
	h.Set("Content-Length", strconv.Itoa(w.buf.Len()))
	w.rw.WriteHeader(w.status)
	if _, err := w.rw.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("write page: %w", err)
	}
	return nil
}

func (w *writer) release() {
	if w.buf != nil {
		w.m.putBuffer(w.buf)
		w.buf = nil
	}
}

// headerOnly is the writer given to Snippet: headers only.
type headerOnly struct{ rw http.ResponseWriter }

func (h headerOnly) Header() http.Header { return h.rw.Header() }
func (headerOnly) Write([]byte) (int, error) {
	return 0, errors.New("inject: Snippet must not write the body")
}
func (headerOnly) WriteHeader(int) {}
