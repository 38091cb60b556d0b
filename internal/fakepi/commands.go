package fakepi

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/pikit-dev/pikit/internal/jsonl"
)

type command struct {
	ID                string  `json:"id,omitempty"`
	Type              string  `json:"type"`
	Message           string  `json:"message,omitempty"`
	StreamingBehavior string  `json:"streamingBehavior,omitempty"`
	Cancelled         bool    `json:"cancelled,omitempty"`
	Confirmed         *bool   `json:"confirmed,omitempty"`
	Value             *string `json:"value,omitempty"`
}

// maxCommand caps one command line the fake reads, in bytes.
const maxCommand = 64 << 20

type fake struct {
	in          *jsonl.Reader
	out         *jsonl.Writer
	raw         io.Writer       // stdout, for a record cut off without LF
	words       map[string]bool // process words of the scenario
	keywords    string          // the scenario's other words
	transcript  string
	resetMode   string // "", reject, fail, hang, late, same, exit
	startupMode string // "", reject, invalid, hang, unexpected: first get_state only
	states      int    // get_state commands answered
	sessionN    int
	holding     bool     // a held run is active
	abortMode   string   // held run: "" settles on abort, "ignore", "reject"
	aborts      int      // aborts of the held run
	dialogID    string   // dialog waiting for an answer
	dialogDelta bool     // the answer is streamed, not notified
	queued      []string // follow-ups queued during a held run
	late        *command // reset answered only when the next command arrives
	heldEcho    *command // an echo "hold" answered after the next echo's answer
}

// readLine returns the next stdin line; io.EOF at the end (also after a
// last line without LF). An oversized or non-UTF-8 line comes back empty,
// so it fails to parse as a command, as in Pi.
func (f *fake) readLine() ([]byte, error) {
	line, err := f.in.Next()
	switch {
	case errors.Is(err, jsonl.ErrUnterminated):
		return nil, io.EOF
	case errors.Is(err, jsonl.ErrOversized), errors.Is(err, jsonl.ErrInvalidUTF8):
		return []byte{}, nil
	}
	return line, err
}

func (f *fake) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own values only
	}
	f.out.WriteRecord(b)
}

// writeLine writes one line as it is, bad JSON included; b holds no LF.
func (f *fake) writeLine(b []byte) { f.out.WriteRecord(b) }

type obj = map[string]any

func (f *fake) respond(c command, data any) {
	r := obj{"type": "response", "command": c.Type, "success": true}
	if c.ID != "" {
		r["id"] = c.ID
	}
	if data != nil {
		r["data"] = data
	}
	f.write(r)
}

func (f *fake) fail(c command, msg string) {
	r := obj{"type": "response", "command": c.Type, "success": false, "error": msg}
	if c.ID != "" {
		r["id"] = c.ID
	}
	f.write(r)
}

// serve answers commands until stdin ends.
func (f *fake) serve() int {
	for {
		line, err := f.readLine()
		if err != nil {
			return 0
		}
		var c command
		if err := json.Unmarshal(line, &c); err != nil {
			f.write(obj{"type": "response", "command": "parse", "success": false, "error": "Failed to parse command"})
			continue
		}
		if code, exit := f.handle(c); exit {
			return code
		}
	}
}

func (f *fake) sessionID() string { return "fake-session-" + strconv.Itoa(f.sessionN) }

var model = obj{"provider": "test", "id": "fake-pi", "name": "Fake Pi", "api": "openai-completions"}

// placeholderModel is what Pi reports with no model configured (reference
// §1.4, observed on 1.6.0).
var placeholderModel = obj{"id": "unknown", "name": "unknown", "api": "unknown", "provider": "unknown", "baseUrl": "",
	"reasoning": false, "input": []any{}, "contextWindow": 0, "maxTokens": 0}

func (f *fake) getState(c command) {
	f.states++
	if f.states == 1 {
		switch f.startupMode {
		case "reject":
			f.fail(c, providerDetail)
			return
		case "invalid":
			f.respond(c, obj{"sessionId": f.sessionID()})
			return
		case "hang":
			return
		case "unexpected":
			f.respond(command{ID: "not-" + c.ID, Type: c.Type}, nil)
			return
		}
	}
	m := model
	if f.words["model-unknown"] {
		m = placeholderModel
	}
	f.respond(c, obj{
		"sessionId":   f.sessionID(),
		"model":       m,
		"isStreaming": f.holding, "isCompacting": false, "thinkingLevel": "off",
		"steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time",
		"autoCompactionEnabled": true, "messageCount": 0, "pendingMessageCount": len(f.queued),
	})
}

func (f *fake) handle(c command) (int, bool) {
	if f.late != nil {
		f.sessionN++
		f.respond(*f.late, obj{"cancelled": false})
		f.late = nil
	}
	switch c.Type {
	case "get_state":
		f.getState(c)
	case "prompt", "steer", "follow_up":
		return f.prompt(c)
	case "abort":
		f.abort(c)
	case "new_session":
		return f.newSession(c)
	case "echo":
		f.echo(c)
	case "get_messages":
		f.respond(c, obj{"messages": []any{}})
	case "get_entries":
		f.respond(c, obj{"entries": []any{}, "leafId": nil})
	case "extension_ui_response":
		f.dialogAnswer(c)
	default:
		f.fail(c, "Unknown command: "+c.Type)
	}
	return 0, false
}

// newSession answers new_session as the scenario's reset mode says; the
// default accepts it with a new session id. "reset-exit" ends the process
// with status 4.
func (f *fake) newSession(c command) (int, bool) {
	switch f.resetMode {
	case "reject":
		f.respond(c, obj{"cancelled": true})
	case "fail":
		f.fail(c, "reset failed")
	case "hang":
	case "late":
		f.late = &c
	case "exit":
		return 4, true
	case "same":
		f.respond(c, obj{"cancelled": false})
	default:
		f.sessionN++
		f.respond(c, obj{"cancelled": false})
	}
	return 0, false
}

// dialogAnswer takes the answer to the pending dialog request (others are
// ignored): it streams or notifies "dialog <answer>" and settles the run.
func (f *fake) dialogAnswer(c command) {
	if f.dialogID != "" && c.ID == f.dialogID {
		f.dialogID = ""
		answer := "cancelled"
		switch {
		case c.Cancelled:
		case c.Confirmed != nil:
			answer = "confirmed=" + strconv.FormatBool(*c.Confirmed)
		case c.Value != nil:
			answer = "value=" + *c.Value
		}
		if f.dialogDelta {
			f.write(delta("dialog " + answer))
		} else {
			f.write(obj{"type": "extension_ui_request", "id": "fake-notify-1", "method": "notify", "message": "dialog " + answer, "notifyType": "info"})
		}
		f.settle()
	}
}

// echo answers the fake's own "echo" command (not Pi's) with data
// {"message": <its message>}. An echo whose message is "hold" is answered
// only after the next echo's answer, so answers arrive out of command
// order, as Pi's do when commands finish at different times.
func (f *fake) echo(c command) {
	if c.Message == "hold" && f.heldEcho == nil {
		f.heldEcho = &c
		return
	}
	f.respond(c, obj{"message": c.Message})
	if h := f.heldEcho; h != nil {
		f.heldEcho = nil
		f.respond(*h, obj{"message": h.Message})
	}
}
