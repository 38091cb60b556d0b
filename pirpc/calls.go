package pirpc

import (
	"context"
	"fmt"
)

func (c *Client) decodeData(r *Response, v any) error {
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return nil
	}
	if err := unmarshalStrict(r.Data, v); err != nil {
		return fmt.Errorf("pirpc: %s data: %w", r.Command, &ProtocolError{Kind: ErrInvalidRecord, Size: len(r.Data), Detail: "unexpected data shape"})
	}
	return nil
}

// GetState sends get_state (reference §1.4).
func (c *Client) GetState(ctx context.Context) (*State, error) {
	r, err := c.Call(ctx, "get_state", nil)
	if err != nil {
		return nil, err
	}
	var s State
	if err := c.decodeData(r, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Prompt sends prompt. The response comes before the run's events; after
// disposition "started", wait for [AgentSettled] on [Client.Events].
func (c *Client) Prompt(ctx context.Context, cmd PromptCommand) (PromptResult, error) {
	return c.promptLike(ctx, "prompt", cmd)
}

// Steer sends steer: delivered after the current turn's tool calls.
func (c *Client) Steer(ctx context.Context, cmd SteerCommand) (PromptResult, error) {
	return c.promptLike(ctx, "steer", cmd)
}

// FollowUp sends follow_up: delivered when the agent would otherwise stop.
func (c *Client) FollowUp(ctx context.Context, cmd FollowUpCommand) (PromptResult, error) {
	return c.promptLike(ctx, "follow_up", cmd)
}

func (c *Client) promptLike(ctx context.Context, typ string, cmd any) (PromptResult, error) {
	var res PromptResult
	r, err := c.Call(ctx, typ, cmd)
	if err != nil {
		return res, err
	}
	return res, c.decodeData(r, &res)
}

// Abort sends abort. Pi answers after the run stopped, i.e. after
// [AgentSettled] with Aborted true was written (reference §1.3).
func (c *Client) Abort(ctx context.Context) error {
	_, err := c.Call(ctx, "abort", nil)
	return err
}

// NewSession sends new_session. Cancelled in the result means an extension
// vetoed the switch; it is not an error.
func (c *Client) NewSession(ctx context.Context, cmd NewSessionCommand) (NewSessionResult, error) {
	var res NewSessionResult
	r, err := c.Call(ctx, "new_session", cmd)
	if err != nil {
		return res, err
	}
	return res, c.decodeData(r, &res)
}

// GetMessages sends get_messages: the projected LLM context (reference §4).
func (c *Client) GetMessages(ctx context.Context) ([]AgentMessage, error) {
	r, err := c.Call(ctx, "get_messages", nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Messages []AgentMessage `json:"messages"`
	}
	return res.Messages, c.decodeData(r, &res)
}

// GetEntries sends get_entries; since is an entry id cursor ("" for all).
func (c *Client) GetEntries(ctx context.Context, since string) (*EntriesResult, error) {
	var params any
	if since != "" {
		params = struct {
			Since string `json:"since"`
		}{since}
	}
	r, err := c.Call(ctx, "get_entries", params)
	if err != nil {
		return nil, err
	}
	var res EntriesResult
	if err := c.decodeData(r, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// RespondUI sends an extension_ui_response. Pi sends no response to it.
func (c *Client) RespondUI(ctx context.Context, resp ExtensionUIResponse) error {
	return c.send(ctx, "extension_ui_response", resp)
}

// CancelUI answers the dialog with the given request id with cancelled:true
// (the extension gets undefined, or false for confirm).
func (c *Client) CancelUI(ctx context.Context, id string) error {
	return c.RespondUI(ctx, ExtensionUIResponse{ID: id, Cancelled: true})
}
