// Package webdriver is a small W3C WebDriver (classic) client: JSON
// commands over HTTP to a driver such as WebKitGTK's WebKitWebDriver (W3C
// WebDriver, "Protocol" and "Endpoints"). It is what internal/browsertest
// uses to drive WebKit.
//
// Every request has a timeout: the context's, bounded by
// [Options.RequestTimeout].
//
// # Example
//
//	s, err := webdriver.NewSession(ctx, "http://127.0.0.1:4444", map[string]any{}, nil)
//	...
//	defer s.Delete(ctx)
//	err = s.Do(ctx, "POST", "/url", map[string]string{"url": page}, nil)
package webdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultRequestTimeout bounds one command when [Options.RequestTimeout]
// is zero: session creation starts a browser, and a script may run long.
const DefaultRequestTimeout = 2 * time.Minute

// maxResponse bounds one response body: a screenshot in base64 fits.
const maxResponse = 64 << 20

// Error is a WebDriver error response.
type Error struct {
	Op      string // "POST /session/{id}/execute/sync", ...
	Status  int    // HTTP status
	Code    string // the spec's error code: "no such window", "javascript error", ...
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("webdriver: %s: %d %s: %s", e.Op, e.Status, e.Code, e.Message)
}

// Options configure [NewSession]; nil means defaults.
type Options struct {
	// RequestTimeout bounds each command; zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// HTTP is the client used; nil means a fresh one that never follows
	// redirects away from the driver.
	HTTP *http.Client
}

// Session is one WebDriver session. It is safe for concurrent use as far as
// the driver is; commands on one session run in the order sent.
type Session struct {
	ID   string
	base string // driver URL without a trailing slash
	o    Options
}

// NewSession creates a session on the driver at base
// (http://127.0.0.1:PORT) with capabilities as alwaysMatch.
func NewSession(ctx context.Context, base string, capabilities any, opts *Options) (*Session, error) {
	s := &Session{base: base}
	if opts != nil {
		s.o = *opts
	}
	if s.o.RequestTimeout == 0 {
		s.o.RequestTimeout = DefaultRequestTimeout
	}
	if s.o.HTTP == nil {
		s.o.HTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": capabilities}}
	if err := s.send(ctx, http.MethodPost, "/session", body, &created); err != nil {
		return nil, err
	}
	if created.SessionID == "" {
		return nil, fmt.Errorf("webdriver: new session: no session id")
	}
	s.ID = created.SessionID
	return s, nil
}

// Do sends a command of the session: path is relative to /session/{id}
// ("/url", "/execute/sync", ...), body is JSON-encoded (nil sends {} on
// POST), and the response's "value" is decoded into result (nil discards
// it). It returns an [*Error] for an error response.
func (s *Session) Do(ctx context.Context, method, path string, body, result any) error {
	return s.send(ctx, method, "/session/"+s.ID+path, body, result)
}

// Delete ends the session; the driver closes its browser.
func (s *Session) Delete(ctx context.Context) error {
	return s.send(ctx, http.MethodDelete, "/session/"+s.ID, nil, nil)
}

func (s *Session) send(ctx context.Context, method, path string, body, result any) error {
	op := method + " " + path
	ctx, cancel := context.WithTimeout(ctx, s.o.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if method == http.MethodPost {
		if body == nil {
			body = struct{}{}
		}
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("webdriver: %s: encode: %w", op, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return fmt.Errorf("webdriver: %s: %w", op, err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := s.o.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("webdriver: %s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("webdriver: %s: read response: %w", op, err)
	}
	if len(data) > maxResponse {
		return fmt.Errorf("webdriver: %s: response over %d bytes", op, maxResponse)
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("webdriver: %s: %d: not a WebDriver response: %w", op, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(env.Value, &e)
		return &Error{Op: op, Status: resp.StatusCode, Code: e.Error, Message: e.Message}
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(env.Value, result); err != nil {
		return fmt.Errorf("webdriver: %s: decode value: %w", op, err)
	}
	return nil
}

// Ready reports whether the driver at base answers GET /status with
// ready: true. It is for waiting until a freshly started driver listens.
func Ready(ctx context.Context, base string) bool {
	s := &Session{base: base, o: Options{RequestTimeout: 2 * time.Second, HTTP: &http.Client{}}}
	var st struct {
		Ready bool `json:"ready"`
	}
	return s.send(ctx, http.MethodGet, "/status", nil, &st) == nil && st.Ready
}
