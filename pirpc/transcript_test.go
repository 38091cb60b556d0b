package pirpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/pikit-dev/pikit/pirpc"
)

type step struct {
	Direction string         `json:"direction"`
	Message   map[string]any `json:"message"`
}

func loadTranscript(t *testing.T, file string) []step {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Steps []step `json:"steps"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return tr.Steps
}

// runStep sends the received command through the typed client API and checks
// the events that the transcript sends next.
func runStep(t *testing.T, ctx context.Context, c *pirpc.Client, cmd map[string]any, sends []map[string]any) {
	t.Helper()
	var resp map[string]any
	var events []map[string]any
	for _, s := range sends {
		if s["type"] == "response" {
			resp = s
		} else {
			events = append(events, s)
		}
	}
	var err error
	switch cmd["type"] {
	case "get_state":
		var st *pirpc.State
		st, err = c.GetState(ctx)
		if err == nil {
			data := resp["data"].(map[string]any)
			if st.SessionID != data["sessionId"] || st.Model == nil || st.Model.ID == "" {
				t.Errorf("state %+v from %v", st, data)
			}
		}
	case "prompt":
		_, err = c.Prompt(ctx, pirpc.PromptCommand{Message: cmd["message"].(string)})
	case "abort":
		err = c.Abort(ctx)
	case "new_session":
		var res pirpc.NewSessionResult
		res, err = c.NewSession(ctx, pirpc.NewSessionCommand{})
		if err == nil && res.Cancelled != resp["data"].(map[string]any)["cancelled"].(bool) {
			t.Errorf("cancelled = %v, transcript %v", res.Cancelled, resp["data"])
		}
	case "extension_ui_response":
		err = c.CancelUI(ctx, cmd["id"].(string))
		resp = map[string]any{"success": true}
	default:
		t.Fatalf("transcript command %v not covered", cmd["type"])
	}
	if resp != nil && resp["success"] == false {
		if !errors.Is(err, pirpc.ErrCommandFailed) {
			t.Errorf("%v: err = %v, want ErrCommandFailed", cmd["type"], err)
		}
	} else if err != nil {
		t.Fatalf("%v: %v", cmd["type"], err)
	}
	for _, want := range events {
		select {
		case ev := <-c.Events():
			if ev.EventType() != want["type"] {
				t.Fatalf("event %s, transcript sends %v", ev.EventType(), want["type"])
			}
			if r, ok := ev.(*pirpc.RawEvent); ok && r.Type != "future_event" {
				t.Errorf("known transcript event %q decoded raw", r.Type)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %v: %v", want["type"], ctx.Err())
		}
	}
}
