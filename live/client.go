package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// ErrNotRunning is what [NewAgentClient] returns for a root whose
// session.json holds no agent token (never started, or stopped).
var ErrNotRunning = errors.New("live: no agent token in session.json (endpoint never started or stopped)")

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
func NewAgentClient(root string, timeout time.Duration) (*AgentClient, error) {
	sess, err := ReadSession(root)
	if err != nil {
		return nil, err
	}
	if sess.AgentToken == "" {
		return nil, ErrNotRunning
	}
	return &AgentClient{base: sess.AgentURL(), token: sess.AgentToken, http: &http.Client{Timeout: timeout}}, nil
}

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
	err := c.post(ctx, "/checkpoints/"+url.PathEscape(id)+"/ack", &res)
	return res, err
}

// post sends an empty JSON body to path and decodes a 200 answer into out.
func (c *AgentClient) post(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("live: endpoint unreachable: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAgentBody))
	if err != nil {
		return fmt.Errorf("live: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return &AnswerError{Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("live: decode answer: %w", err)
	}
	return nil
}
