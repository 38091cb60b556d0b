package loopback

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults for the zero fields of [Options].
const (
	DefaultAddr              = "127.0.0.1:0"
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxConns          = 256
	DefaultShutdownTimeout   = 5 * time.Second
)

// Options configure a [Server]. The zero value is a loopback server on a
// free port with the Default* timeouts and cap. Durations are wall-clock;
// a negative duration or cap panics in [New].
type Options struct {
	// Addr is the TCP address to listen on; "" means [DefaultAddr]. Use a
	// loopback address unless remote peers are meant to connect (and then
	// guard every route with a [HostGuard] that allows their host).
	Addr string
	// Listener, if set, is served instead of listening on Addr; the Server
	// owns it and closes it.
	Listener net.Listener

	// ReadHeaderTimeout bounds reading a request's headers, counted from
	// the first byte (from the connection's start for its first request);
	// 0 means [DefaultReadHeaderTimeout].
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a normal request's body, counted from the
	// end of its headers; 0 means [DefaultReadTimeout]. Streams have no
	// body and no read deadline.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a normal request's response, counted
	// from the end of its headers; 0 means [DefaultWriteTimeout]. Streams
	// have no write deadline.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no new request
	// for this long; 0 means [DefaultIdleTimeout].
	IdleTimeout time.Duration
	// MaxConns caps the open connections, streams and hijacked
	// connections included; 0 means [DefaultMaxConns]. See the package doc
	// for what happens at the cap.
	MaxConns int
	// MaxHeaderBytes caps a request's headers; 0 means
	// http.DefaultMaxHeaderBytes (1 MiB).
	MaxHeaderBytes int

	// Stream decides which requests are streams (long-lived: no read or
	// write deadline, context ended when the server starts closing);
	// nil means [IsStream]. A request with a body is never a stream.
	Stream func(*http.Request) bool

	// ShutdownTimeout bounds how long [Serve] waits for open requests once
	// its ctx ends; 0 means [DefaultShutdownTimeout]. [Server.Close] takes
	// its bound from its ctx instead.
	ShutdownTimeout time.Duration

	// Logger receives net/http's own error lines (TLS handshake errors,
	// panics in handlers) at debug level; nil discards.
	Logger *slog.Logger
}

// Server is a local HTTP server: [New], then [Server.Start], then
// [Server.Close]. It is safe for concurrent use and cannot be reused after
// Close.
type Server struct {
	opts Options
	h    http.Handler

	closing context.Context // done when Close starts: streams end
	cancel  context.CancelFunc

	mu         sync.Mutex
	srv        *http.Server
	ln         *capListener
	cancelBase context.CancelFunc // ends every request's context
	serveErr   error              // Serve's error other than ErrServerClosed
	closed     bool               // Close has started
	closeErr   error              // set before closeDone is closed

	done      chan struct{} // closed when Serve returns (or by Close before Start)
	closeDone chan struct{} // closed when the first Close returns
}

// New returns a server for h configured by opts (nil means the zero
// Options). It panics on a negative timeout or cap.
func New(h http.Handler, opts *Options) *Server {
	if h == nil {
		panic("loopback: nil handler")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, d := range []time.Duration{o.ReadHeaderTimeout, o.ReadTimeout, o.WriteTimeout, o.IdleTimeout, o.ShutdownTimeout} {
		if d < 0 {
			panic("loopback: negative timeout in Options")
		}
	}
	if o.MaxConns < 0 || o.MaxHeaderBytes < 0 {
		panic("loopback: negative limit in Options")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.ShutdownTimeout, DefaultShutdownTimeout)
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.Stream == nil {
		o.Stream = IsStream
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: o, h: h, done: make(chan struct{}), closeDone: make(chan struct{})}
	s.closing, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start listens (unless [Options.Listener] is set) and serves in the
// background. ctx bounds only the listen call. Start may be called once.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil || s.closed {
		return errors.New("loopback: server already started or closed")
	}
	ln := s.opts.Listener
	if ln == nil {
		var lc net.ListenConfig
		var err error
		if ln, err = lc.Listen(ctx, "tcp", s.opts.Addr); err != nil {
			return fmt.Errorf("loopback: listen: %w", err)
		}
	}
	s.ln = newCapListener(ln, s.opts.MaxConns)
	// Requests derive from base: cancelling it after Shutdown ends what
	// Shutdown does not track (hijacked connections' handlers).
	base, cancelBase := context.WithCancel(context.Background())
	s.cancelBase = cancelBase
	s.srv = &http.Server{
		Handler: &classify{
			next: s.h, stream: s.opts.Stream, read: s.opts.ReadTimeout, write: s.opts.WriteTimeout,
			closing: s.closing,
		},
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		// ReadTimeout and WriteTimeout stay zero: classify sets them per
		// request, so that streams are not cut.
		IdleTimeout:    s.opts.IdleTimeout,
		MaxHeaderBytes: s.opts.MaxHeaderBytes,
		ConnState:      s.ln.setState,
		BaseContext:    func(net.Listener) context.Context { return base },
		ErrorLog:       slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug),
	}
	srv, cl := s.srv, s.ln
	go func() {
		defer close(s.done)
		err := srv.Serve(cl)
		if !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.serveErr = fmt.Errorf("loopback: serve: %w", err)
			s.mu.Unlock()
		}
	}()
	return nil
}

// Addr returns the listening address, or nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Conns returns the number of open connections (streams and hijacked
// connections included).
func (s *Server) Conns() int {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return 0
	}
	return ln.open()
}

// Done is closed when the server has stopped serving: after Close, or
// when serving failed (then Close returns the error).
func (s *Server) Done() <-chan struct{} { return s.done }

// Close shuts the server down and waits for it: stream requests' contexts
// end at once; the listener and idle connections close; other requests may
// finish until ctx ends, after which every connection (hijacked ones too)
// is closed. It returns ctx's error when requests were cut, a serve
// failure, or nil; [http.ErrServerClosed] counts as success. Close is
// idempotent: later calls return the first call's result.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return s.closeErr
	}
	s.closed = true
	srv, cancelBase := s.srv, s.cancelBase
	s.mu.Unlock()
	defer close(s.closeDone)
	s.cancel()
	if srv == nil {
		close(s.done)
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		srv.Close()
	}
	cancelBase()
	s.ln.closeAll()
	<-s.done
	s.mu.Lock()
	if err == nil {
		err = s.serveErr
	}
	s.closeErr = err
	s.mu.Unlock()
	return err
}

// Serve runs h until ctx ends: it starts a [Server], calls ready (if not
// nil) with the bound address, and when ctx ends or serving fails closes
// it within [Options.ShutdownTimeout]. It returns nil after a clean stop,
// else the listen, serve or shutdown error.
func Serve(ctx context.Context, h http.Handler, opts *Options, ready func(net.Addr)) error {
	s := New(h, opts)
	if err := s.Start(ctx); err != nil {
		return err
	}
	if ready != nil {
		ready(s.Addr())
	}
	select {
	case <-ctx.Done():
	case <-s.Done():
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	return s.Close(cctx)
}
