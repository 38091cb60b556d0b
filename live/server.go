package live

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// Server is the endpoint process's library half (reference §3.1): Start
// decides between a fresh start and a resume from the run directory,
// listens, opens the [endpoint], records state/session.json and serves;
// Close stops serving and closes the endpoint. Set the fields, then Start
// once, or Run, which also stops on the idle timeout or the owner's exit;
// a Server cannot be reused. Process concerns (the pid file and its lock,
// the environment, signals) belong to the caller (cmd/pikit live serve).
type Server struct {
	// Root is the run directory (required).
	Root string
	// AppOrigin is required for a fresh start; a resume keeps the stored
	// one unless this is set.
	AppOrigin string
	// Host is the bind address: "" keeps the stored one on resume, else
	// 127.0.0.1.
	Host string
	// Port 0 means the stored port on resume, else an ephemeral one;
	// PortSet means Port was given explicitly (no fallback when taken).
	Port    int
	PortSet bool
	// OwnerPID is recorded in session.json (0: none).
	OwnerPID int
	// TrustProxy replaces the stored proxy list when not empty.
	TrustProxy []netip.Addr
	// Options tunes the endpoint; Root, AppOrigin, the tokens, TrustProxy
	// and Logger are set by Start.
	Options Options
	// Logger receives operational messages (nil: discard).
	Logger *slog.Logger

	line StartLine
	e    *endpoint
	srv  *loopback.Server
	log  *slog.Logger
}

// StartLine is what start prints: never the agent token.
type StartLine struct {
	URL       string `json:"url"`
	Port      int    `json:"port"`
	PageToken string `json:"page_token"`
	Status    string `json:"status"` // started | resumed | running
}

// Start prepares the run directory, listens and serves in the background.
// It returns once the listener is up and session.json names this process.
// [Server.Run] is Start plus the serve loop of the endpoint process.
func (s *Server) Start() error {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.log = log
	root, err := filepath.Abs(s.Root)
	if err != nil {
		return fmt.Errorf("live: resolve root: %w", err)
	}
	sf, resume, err := prepareRun(root, s.AppOrigin)
	if err != nil {
		return err
	}
	if s.Host != "" {
		sf.Host = s.Host
	}
	if sf.Host == "" {
		sf.Host = "127.0.0.1"
	}
	if len(s.TrustProxy) > 0 {
		sf.TrustProxy = nil
		for _, a := range s.TrustProxy {
			sf.TrustProxy = append(sf.TrustProxy, a.String())
		}
	}
	var trust []netip.Addr
	for _, p := range sf.TrustProxy {
		if a, err := netip.ParseAddr(p); err == nil {
			trust = append(trust, a)
		}
	}
	port := s.Port
	if !s.PortSet && resume {
		port = sf.Port
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(sf.Host, strconv.Itoa(port)))
	if err != nil && !s.PortSet && port != 0 {
		ln, err = net.Listen("tcp", net.JoinHostPort(sf.Host, "0"))
	}
	if err != nil {
		return fmt.Errorf("live: listen: %w", err)
	}
	sf.Port = ln.Addr().(*net.TCPAddr).Port
	switch sf.Host {
	case "127.0.0.1", "0.0.0.0", "::":
		sf.URL = "http://localhost:" + strconv.Itoa(sf.Port)
	default:
		sf.URL = "http://" + net.JoinHostPort(sf.Host, strconv.Itoa(sf.Port))
	}
	pid := os.Getpid()
	sf.PID, sf.OwnerPID = &pid, nil
	if s.OwnerPID > 1 {
		o := s.OwnerPID
		sf.OwnerPID = &o
	}
	opts := s.Options
	opts.Root, opts.AppOrigin, opts.PageToken, opts.AgentToken = root, sf.AppOrigin, *sf.PageToken, *sf.AgentToken
	opts.TrustProxy, opts.Logger = trust, log
	e, err := open(opts)
	if err != nil {
		ln.Close()
		return err
	}
	if err := e.st.saveSession(sf); err != nil {
		ln.Close()
		return errors.Join(err, e.Close(context.Background()))
	}
	// Bearer tokens and the exact Origin guard every route; the Host is not
	// checked, as tunnels forward public names (reference §2, §2.4 mint).
	srv := loopback.New(e.Handler(), &loopback.Options{Listener: ln, Stream: isLiveStream, Logger: log})
	if err := srv.Start(context.Background()); err != nil {
		return errors.Join(err, e.Close(context.Background()))
	}
	status := "started"
	if resume {
		status = "resumed"
	}
	s.e, s.srv = e, srv
	s.line = StartLine{URL: sf.URL, Port: sf.Port, PageToken: *sf.PageToken, Status: status}
	log.Info("live: serving", "port", sf.Port, "status", status)
	return nil
}

// isLiveStream classifies the long-lived requests: the SSE stream and the
// /wait long poll have no read or write deadline.
func isLiveStream(r *http.Request) bool {
	return loopback.IsStream(r) || r.URL.Path == "/stream" || r.URL.Path == "/wait"
}

// Line is the start line (valid after Start).
func (s *Server) Line() StartLine { return s.line }

// Done is closed when serving stopped by itself (a serve failure); Close
// then returns the error.
func (s *Server) Done() <-chan struct{} { return s.srv.Done() }

// Close ends streams and parked waits, stops serving within ctx and closes
// the endpoint (board.json flushed, files closed). It does not end the
// session. It returns the first error, a sticky storage failure included.
func (s *Server) Close(ctx context.Context) error {
	if s.e == nil {
		return nil
	}
	s.e.cancel() // ends streams and parked waits first
	err := s.srv.Close(ctx)
	if cerr := s.e.Close(ctx); cerr != nil {
		err = cerr
	}
	return err
}

// prepareRun reads the run directory and decides fresh start or resume
// (reference §3.1): a resume keeps the tokens and settings of a session
// that is live, or ended with work left; a fresh start mints tokens,
// clears board, batches and journal and rotates the previous log away.
func prepareRun(root, appOrigin string) (sf *sessionFile, resume bool, err error) {
	dir := filepath.Join(root, stateDirName)
	if err := ensureDirs(dir); err != nil {
		return nil, false, err
	}
	prev, perr := loadSession(root)
	if perr != nil && !errors.Is(perr, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("live: read session: %w", perr)
	}
	tmp := &store{root: root, dir: dir}
	board, err := tmp.loadBoard()
	if err != nil {
		return nil, false, err
	}
	ended := board.Ended || (prev != nil && prev.Ended)
	resume = prev != nil && prev.AgentToken != nil &&
		((!ended && prev.PageToken != nil) || (ended && !board.drained()))
	sf = &sessionFile{Root: root, LogDir: filepath.Join(dir, logDirName), TrustProxy: []string{}}
	if resume {
		*sf = *prev
		sf.Root, sf.LogDir = root, filepath.Join(dir, logDirName)
		if appOrigin != "" && appOrigin != prev.AppOrigin {
			sf.AppOrigin = appOrigin
		}
		if board.Ended != sf.Ended {
			sf.Ended, board.Ended = true, true
			if _, err := tmp.saveBoard(board); err != nil {
				return nil, false, err
			}
		}
		return sf, true, nil
	}
	if appOrigin == "" {
		return nil, false, errors.New("live: --app-origin is required for a fresh start")
	}
	pt, at := newToken(), newToken()
	sf.PageToken, sf.AgentToken = &pt, &at
	sf.AppOrigin = appOrigin
	sf.StartedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := os.RemoveAll(filepath.Join(dir, batchesDirName)); err != nil {
		return nil, false, fmt.Errorf("live: clear batches: %w", err)
	}
	for _, name := range []string{boardFile, opsFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("live: clear %s: %w", name, err)
		}
	}
	if prev != nil {
		if _, err := os.Stat(filepath.Join(dir, logDirName, eventsFile)); err == nil {
			st := &store{root: root, dir: dir}
			if _, err := st.rotateLog(time.Now()); err != nil {
				return nil, false, err
			}
			st.close()
		}
	}
	if err := ensureDirs(dir); err != nil {
		return nil, false, err
	}
	return sf, false, nil
}
