package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
)

// ErrNotRunning is what [NewAgentClient] returns for a root whose
// session.json holds no agent token (never started, or stopped).
var ErrNotRunning = errors.New("live: no agent token in session.json (endpoint never started or stopped)")

// ErrNoSession is returned by [NewAgentClient] for a root no endpoint was
// ever started in (no session.json); it wraps [ErrNotRunning].
var ErrNoSession = fmt.Errorf("live: no session in this root (start one with pikit live start, or pass --root): %w", ErrNotRunning)

// AgentURL is the base URL an agent on this machine reaches the endpoint
// at: the loopback address of the bind host (127.0.0.1 for 0.0.0.0 and an
// empty host, ::1 for ::) and the port, http, no trailing slash.
func (s Session) AgentURL() string {
	host := s.Host
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(s.Port))
}

// AgentClient calls the agent routes of root's endpoint as the skill's
// agent loop does (reference §2.5): the agent token of session.json as a
// bearer, no Origin header, the loopback [Session.AgentURL]. It holds the
// token in memory only.
type AgentClient struct {
	base, token string
	http        *http.Client
}

// NewAgentClient reads root's session.json; timeout bounds each request.
// A root without one gives [ErrNoSession], a stopped endpoint
// [ErrNotRunning].
func NewAgentClient(root string, timeout time.Duration) (*AgentClient, error) {
	sess, err := ReadSession(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	if sess.AgentToken == "" {
		return nil, ErrNotRunning
	}
	return &AgentClient{base: sess.AgentURL(), token: sess.AgentToken, http: &http.Client{Timeout: timeout}}, nil
}

// maxWaitAnswer caps what the client reads of one answer (a wake
// envelope carries whole units with their evidence).
const maxWaitAnswer = 32 << 20

// AnswerError is an endpoint answer other than 2xx: its HTTP status and
// its body (compact JSON, at most 64 KiB read).
type AnswerError struct {
	Status int
	Body   string
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("live: HTTP %d %s", e.Status, e.Body)
}

// Ack acknowledges checkpoint id (POST /checkpoints/:id/ack, the id
// percent-encoded as one path segment). A repeat ack answers
// AlreadyAcked; an unknown id is an *AnswerError with Status 404.
func (c *AgentClient) Ack(ctx context.Context, id string) (AckResult, error) {
	var res AckResult
	err := c.post(ctx, "/checkpoints/"+url.PathEscape(id)+"/ack", nil, &res)
	return res, err
}

// UnitResult is the answer to POST /units/:id/status and /units/:id/ask.
type UnitResult struct {
	OK     bool   `json:"ok"`
	UnitID string `json:"unit_id"`
	Status string `json:"status"`
}

// UnitStatus posts status (one of accepted, needs_info, working, applied,
// blocked, withdrawn, triaging: the endpoint validates) with an optional
// note and guess ("" leaves them unchanged) for unit id. The endpoint's
// refusals are *AnswerError: 400 bad status, 404 unknown unit, 409 unit
// withdrawn.
func (c *AgentClient) UnitStatus(ctx context.Context, id, status, note, guess string) (UnitResult, error) {
	body := struct {
		Status string `json:"status"`
		Note   string `json:"note,omitempty"`
		Guess  string `json:"guess,omitempty"`
	}{status, note, guess}
	var res UnitResult
	err := c.post(ctx, "/units/"+url.PathEscape(id)+"/status", body, &res)
	return res, err
}

// Ask posts a question for unit id to the page (the unit becomes
// needs_info). An empty question is answered 400 by the endpoint.
func (c *AgentClient) Ask(ctx context.Context, id, question string) (UnitResult, error) {
	body := struct {
		Question string `json:"question"`
	}{question}
	var res UnitResult
	err := c.post(ctx, "/units/"+url.PathEscape(id)+"/ask", body, &res)
	return res, err
}

// Status reads the board summary (GET /status).
func (c *AgentClient) Status(ctx context.Context) (StatusSummary, error) {
	var res StatusSummary
	status, body, err := c.do(ctx, c.http, http.MethodGet, "/status", nil)
	if err != nil {
		return res, err
	}
	if status != http.StatusOK {
		return res, &AnswerError{Status: status, Body: string(body)}
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return res, fmt.Errorf("live: decode answer: %w", err)
	}
	return res, nil
}

// post sends in as a JSON body ({} when nil) to path and decodes a 200
// answer into out.
func (c *AgentClient) post(ctx context.Context, path string, in, out any) error {
	payload := []byte("{}")
	if in != nil {
		var err error
		if payload, err = json.Marshal(in); err != nil {
			return err
		}
	}
	status, body, err := c.do(ctx, c.http, http.MethodPost, path, payload)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return &AnswerError{Status: status, Body: string(body)}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("live: decode answer: %w", err)
	}
	return nil
}

// do sends one request with the agent token and returns the answer's
// status and body (trimmed, at most maxAgentBody bytes; a wake envelope
// is bounded by the same cap the endpoint writes batches with).
func (c *AgentClient) do(ctx context.Context, hc *http.Client, method, path string, payload []byte) (int, []byte, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("live: endpoint unreachable: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWaitAnswer))
	if err != nil {
		return 0, nil, fmt.Errorf("live: read answer: %w", err)
	}
	return resp.StatusCode, bytes.TrimSpace(body), nil
}
