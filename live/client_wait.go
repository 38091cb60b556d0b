package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrUnreachable is what [AgentClient.Wait] wraps when a request gets no
// HTTP answer (the endpoint is gone, or the client's timeout ran out).
var ErrUnreachable = errors.New("live: endpoint unreachable")

// WaitOutcome is how a long poll of GET /wait ended (reference §3.2).
type WaitOutcome int

const (
	// WaitBatch: 200, the body is the wake envelope.
	WaitBatch WaitOutcome = iota
	// WaitEnded: 410, the body is the session-ended answer.
	WaitEnded
	// WaitTaken: 409, a newer wait took the agent's place; no body.
	WaitTaken
	// WaitIdle: 204, the wait ended with nothing to deliver (the wait
	// timeout passed, or the page came back after a page-lost episode);
	// only [AgentClient.Poll] returns it.
	WaitIdle
)

// WaitAnswer is one final answer of GET /wait: its outcome and, for
// WaitBatch and WaitEnded, its body with surrounding white space trimmed.
type WaitAnswer struct {
	Outcome WaitOutcome
	Body    []byte
}

// Wait long-polls GET /wait as the agent until the endpoint answers
// something other than 204 (the wait timeout passed with nothing to
// deliver, which it polls again). Any other status is an *[AnswerError];
// a request without an answer wraps [ErrUnreachable]; a cancelled ctx
// ends the wait with an error. The client's timeout bounds each poll, so
// it must exceed the endpoint's wait timeout.
func (c *AgentClient) Wait(ctx context.Context) (WaitAnswer, error) {
	for {
		a, err := c.Poll(ctx)
		if err != nil || a.Outcome != WaitIdle {
			return a, err
		}
	}
}

// Poll is one long poll of GET /wait: [AgentClient.Wait]'s answers, and [WaitIdle]
// for a 204.
func (c *AgentClient) Poll(ctx context.Context) (WaitAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/wait", nil)
	if err != nil {
		return WaitAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return WaitAnswer{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body = bytes.TrimSpace(body)
	switch resp.StatusCode {
	case http.StatusOK:
		return WaitAnswer{Outcome: WaitBatch, Body: body}, nil
	case http.StatusGone:
		return WaitAnswer{Outcome: WaitEnded, Body: body}, nil
	case http.StatusConflict:
		return WaitAnswer{Outcome: WaitTaken}, nil
	case http.StatusNoContent:
		return WaitAnswer{Outcome: WaitIdle}, nil
	}
	return WaitAnswer{}, &AnswerError{Status: resp.StatusCode, Body: string(body)}
}
