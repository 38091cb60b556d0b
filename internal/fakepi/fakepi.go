// Package fakepi is a deterministic fake of `pi --mode rpc` for the edge
// cases real Pi cannot produce on demand (reference §1 for the real wire).
//
// # Re-exec
//
// Any test binary can be the fake: its TestMain calls [Main] when [Requested]
// (env PIKIT_FAKE_PI=1), and tests spawn os.Executable() with the env from
// [Command]. internal/pitest.Main does this for you:
//
//	func TestMain(m *testing.M) { pitest.Main(m) }
//	...
//	exe, env, err := fakepi.Command(fakepi.Config{Scenario: "reset-reject"})
//	c, err := pirpc.Start(ctx, pirpc.Options{Executable: exe, Env: env})
//
// # Transcripts
//
// With Config.Transcript (env PIKIT_FAKE_PI_TRANSCRIPT) the fake replays an
// rpc-transcript.v1 file (../shared/taskbar-contract/fixtures/rpc/*.json):
// each "receive" step reads the next command and checks its type (a mismatch
// exits with status 4), each "send" step writes its message with ids of
// received commands replaced by the ids the client used. After the last
// step the keyword behaviours below answer.
//
// # Keywords
//
// A prompt's text, with Config.Scenario (env PIKIT_FAKE_PI_SCENARIO)
// prepended, selects the behaviour; the first matching keyword wins:
//
//	reject            prompt fails: success:false, error "provider detail"
//	reject reset      later new_session answers {cancelled:true}      (also scenario "reset-reject")
//	fail reset        later new_session answers success:false         (also "reset-fail")
//	hang reset        later new_session never answers                 (also "reset-hang")
//	hold              run stays open until abort; then agent_settled{aborted:true} and the abort response
//	dialog            confirm dialog; waits for extension_ui_response; notify with the answer; settle
//	malformed         writes `{not json` during the run
//	oversized         writes a 1,000,100-byte record during the run
//	non-object        writes `[1,2,3]` during the run
//	invalid-utf8      writes a record with a 0xff byte during the run
//	unterminated      writes half a record without LF and exits 0
//	unexpected response  writes a response with an unknown id and a "parse" response without id
//	message error     message_update error, assistant message_end stopReason "error", settle
//	retry failure     auto_retry_start/auto_retry_end{success:false}, settle
//	compaction failure  compaction_start/compaction_end with errorMessage, settle
//	tool              tool_execution_start/update/end of "bash"
//	unknown event     writes {"type":"future_event"}
//	exit mid-task     writes "fakepi: exit mid-task" to stderr, exits with status 3 after agent_start
//	output N          N text deltas of 100 bytes each (bounded-output tests)
//	(anything else)   streams "fake reply" and settles
//
// A prompt during a held run needs streamingBehavior (then it is queued), as
// in Pi. Process-level scenarios: "exit-on-start" exits with status 3
// before reading stdin; "ignore-eof" keeps running after stdin ends (only a
// signal stops it); "ignore-term" also ignores SIGTERM (only SIGKILL);
// "reset-late" answers new_session only when the next command arrives;
// "no-read" never reads stdin (only a signal stops it).
package fakepi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Environment variables read by [Main] and [Requested].
const (
	EnvFake       = "PIKIT_FAKE_PI"
	EnvScenario   = "PIKIT_FAKE_PI_SCENARIO"
	EnvTranscript = "PIKIT_FAKE_PI_TRANSCRIPT"
)

// Config chooses the fake's behaviour.
type Config struct {
	// Scenario holds keywords applied to every prompt, plus the
	// process-level "reset-reject", "reset-fail", "reset-hang",
	// "reset-late", "exit-on-start", "ignore-eof", "ignore-term", "no-read".
	Scenario string
	// Transcript is the path of an rpc-transcript.v1 JSON file to replay.
	Transcript string
}

// Env returns the environment entries that make a re-executed test binary
// run as the fake with cfg.
func (cfg Config) Env() []string {
	// A -race binary sleeps 1 s at exit by default; the fake must exit at once.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	env := []string{EnvFake + "=1", "GORACE=" + gorace}
	if cfg.Scenario != "" {
		env = append(env, EnvScenario+"="+cfg.Scenario)
	}
	if cfg.Transcript != "" {
		env = append(env, EnvTranscript+"="+cfg.Transcript)
	}
	return env
}

// Command returns the executable (this test binary) and the extra
// environment that run the fake with cfg. The binary's TestMain must call
// [Main] when [Requested].
func Command(cfg Config) (exe string, env []string, err error) {
	exe, err = os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("fakepi: executable: %w", err)
	}
	return exe, cfg.Env(), nil
}

// Requested reports whether this process was started as the fake.
func Requested() bool { return os.Getenv(EnvFake) == "1" }

// Main runs the fake Pi until stdin ends and returns the exit status. args
// are the command-line arguments without the program name; they must hold
// "--mode rpc". env holds KEY=VALUE entries.
func Main(stdin io.Reader, stdout io.Writer, args []string, env []string) int {
	if i := slices.Index(args, "--mode"); i < 0 || i+1 >= len(args) || args[i+1] != "rpc" {
		fmt.Fprintln(os.Stderr, "fakepi: want --mode rpc")
		return 2
	}
	f := &fake{
		in:         bufio.NewReaderSize(stdin, 64<<10),
		out:        stdout,
		scenario:   strings.ToLower(lookup(env, EnvScenario)),
		sessionN:   1,
		transcript: lookup(env, EnvTranscript),
	}
	for _, m := range []string{"reject", "fail", "hang", "late"} {
		if strings.Contains(f.scenario, "reset-"+m) {
			f.resetMode = m
		}
	}
	if strings.Contains(f.scenario, "exit-on-start") {
		return 3
	}
	if strings.Contains(f.scenario, "ignore-term") {
		signal.Ignore(syscall.SIGTERM)
	}
	if strings.Contains(f.scenario, "no-read") {
		for { // never reads stdin: the client's writes back up
			time.Sleep(time.Hour)
		}
	}
	code := 0
	ok := true
	if f.transcript != "" {
		code, ok = f.replay()
	}
	if ok {
		code = f.serve()
	}
	if strings.Contains(f.scenario, "ignore-eof") || strings.Contains(f.scenario, "ignore-term") {
		for { // only a signal ends this process
			time.Sleep(time.Hour)
		}
	}
	return code
}

func lookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

type command struct {
	ID                string  `json:"id,omitempty"`
	Type              string  `json:"type"`
	Message           string  `json:"message,omitempty"`
	StreamingBehavior string  `json:"streamingBehavior,omitempty"`
	Cancelled         bool    `json:"cancelled,omitempty"`
	Confirmed         *bool   `json:"confirmed,omitempty"`
	Value             *string `json:"value,omitempty"`
}

type fake struct {
	in         *bufio.Reader
	out        io.Writer
	scenario   string
	transcript string
	resetMode  string // "", reject, fail, hang
	sessionN   int
	holding    bool     // a held run is active
	dialogID   string   // dialog waiting for an answer
	queued     []string // follow-ups queued during a held run
	late       *command // reset answered only when the next command arrives
}

// readCommand returns the next stdin line; io.EOF at the end.
func (f *fake) readLine() ([]byte, error) {
	line, err := f.in.ReadBytes('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			return bytes.TrimRight(line, "\r"), nil
		}
		return nil, err
	}
	return bytes.TrimRight(line[:len(line)-1], "\r"), nil
}

func (f *fake) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own values only
	}
	f.writeRaw(append(b, '\n'))
}

func (f *fake) writeRaw(b []byte) { f.out.Write(b) }

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

func (f *fake) handle(c command) (int, bool) {
	if f.late != nil {
		f.sessionN++
		f.respond(*f.late, obj{"cancelled": false})
		f.late = nil
	}
	switch c.Type {
	case "get_state":
		f.respond(c, obj{
			"sessionId":   f.sessionID(),
			"model":       obj{"provider": "fake", "id": "fake-pi", "name": "Fake Pi", "api": "openai-completions"},
			"isStreaming": f.holding, "isCompacting": false, "thinkingLevel": "off",
			"steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time",
			"autoCompactionEnabled": true, "messageCount": 0, "pendingMessageCount": len(f.queued),
		})
	case "prompt", "steer", "follow_up":
		return f.prompt(c)
	case "abort":
		if f.holding {
			f.holding = false
			f.write(assistantEnd("partial", "aborted", "Request was aborted"))
			f.write(obj{"type": "turn_end", "message": assistant("partial", "aborted", "Request was aborted"), "toolResults": []any{}})
			f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": false})
			f.write(obj{"type": "agent_settled", "aborted": true})
		}
		f.respond(c, nil)
	case "new_session":
		switch f.resetMode {
		case "reject":
			f.respond(c, obj{"cancelled": true})
		case "fail":
			f.fail(c, "reset failed")
		case "hang":
		case "late":
			f.late = &c
		default:
			f.sessionN++
			f.respond(c, obj{"cancelled": false})
		}
	case "get_messages":
		f.respond(c, obj{"messages": []any{}})
	case "get_entries":
		f.respond(c, obj{"entries": []any{}, "leafId": nil})
	case "extension_ui_response":
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
			f.write(obj{"type": "extension_ui_request", "id": "fake-notify-1", "method": "notify", "message": "dialog " + answer, "notifyType": "info"})
			f.settle()
		}
	default:
		f.fail(c, "Unknown command: "+c.Type)
	}
	return 0, false
}

func assistant(text, stop, errMsg string) obj {
	m := obj{"role": "assistant", "content": []any{obj{"type": "text", "text": text}}, "api": "openai-completions",
		"provider": "fake", "model": "fake-pi", "stopReason": stop, "timestamp": 1}
	if errMsg != "" {
		m["errorMessage"] = errMsg
	}
	return m
}

func assistantEnd(text, stop, errMsg string) obj {
	return obj{"type": "message_end", "message": assistant(text, stop, errMsg)}
}

func delta(s string) obj {
	return obj{"type": "message_update", "assistantMessageEvent": obj{"type": "text_delta", "contentIndex": 0, "delta": s}}
}

// settle ends a run the normal way.
func (f *fake) settle() {
	f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": false})
	f.write(obj{"type": "agent_settled", "aborted": false})
}

func (f *fake) prompt(c command) (int, bool) {
	text := strings.ToLower(f.scenario + " " + c.Message)
	has := func(k string) bool { return strings.Contains(text, k) }
	if f.holding {
		if c.Type == "prompt" && c.StreamingBehavior == "" {
			f.fail(c, "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
			return 0, false
		}
		f.queued = append(f.queued, c.Message)
		f.write(obj{"type": "queue_update", "steering": []string{}, "followUp": f.queued})
		f.respond(c, obj{"disposition": "queued"})
		return 0, false
	}
	switch {
	case has("reject reset"):
		f.resetMode = "reject"
		f.respond(c, obj{"disposition": "handled"})
		return 0, false
	case has("fail reset"):
		f.resetMode = "fail"
		f.respond(c, obj{"disposition": "handled"})
		return 0, false
	case has("hang reset"):
		f.resetMode = "hang"
		f.respond(c, obj{"disposition": "handled"})
		return 0, false
	case has("reject"):
		f.fail(c, "provider detail")
		return 0, false
	}
	f.respond(c, obj{"disposition": "started"})
	f.write(obj{"type": "agent_start"})
	f.write(obj{"type": "turn_start"})
	switch {
	case has("hold"):
		f.holding = true
		f.write(obj{"type": "message_start", "message": assistant("", "pending", "")})
		f.write(delta("partial"))
		return 0, false
	case has("dialog"):
		f.dialogID = "fake-dialog-1"
		f.write(obj{"type": "extension_ui_request", "id": f.dialogID, "method": "confirm", "title": "Continue?", "message": "Continue?"})
		return 0, false
	case has("exit mid-task"):
		fmt.Fprintln(os.Stderr, "fakepi: exit mid-task")
		return 3, true
	case has("unterminated"):
		f.writeRaw([]byte(`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","del`))
		return 0, true
	case has("malformed"):
		f.writeRaw([]byte("{not json\n"))
	case has("oversized"):
		f.writeRaw(append(append([]byte(`{"type":"message_update","pad":"`), bytes.Repeat([]byte("x"), 1_000_100-36)...), []byte("\"}\n")...))
	case has("non-object"):
		f.writeRaw([]byte("[1,2,3]\n"))
	case has("invalid-utf8"):
		f.writeRaw([]byte("{\"type\":\"message_update\",\"x\":\"\xff\"}\n"))
	case has("unexpected response"):
		f.write(obj{"type": "response", "id": "nobody-asked", "command": "get_state", "success": true})
		f.write(obj{"type": "response", "command": "parse", "success": false, "error": "Failed to parse command"})
	case has("message error"):
		f.write(obj{"type": "message_update", "assistantMessageEvent": obj{"type": "error", "reason": "error", "error": "provider detail"}})
		f.write(assistantEnd("", "error", "provider detail"))
		f.settle()
		return 0, false
	case has("retry failure"):
		f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": true})
		f.write(obj{"type": "auto_retry_start", "attempt": 3, "maxAttempts": 3, "delayMs": 1, "errorMessage": "provider detail"})
		f.write(obj{"type": "auto_retry_end", "success": false, "attempt": 3, "finalError": "provider detail"})
		f.write(obj{"type": "agent_settled", "aborted": false})
		return 0, false
	case has("compaction failure"):
		f.write(obj{"type": "compaction_start", "reason": "threshold"})
		f.write(obj{"type": "compaction_end", "reason": "threshold", "result": nil, "aborted": false, "willRetry": false, "errorMessage": "provider detail"})
		f.settle()
		return 0, false
	case has("tool"):
		f.write(obj{"type": "tool_execution_start", "toolCallId": "tool-1", "toolName": "bash", "args": obj{"command": "true"}})
		f.write(obj{"type": "tool_execution_update", "toolCallId": "tool-1", "toolName": "bash", "args": obj{"command": "true"}, "partialResult": obj{"content": []any{}}})
		f.write(obj{"type": "tool_execution_end", "toolCallId": "tool-1", "toolName": "bash", "result": obj{"content": []any{}}, "isError": false})
	case has("unknown event"):
		f.write(obj{"type": "future_event", "providerDetail": "ignored"})
	case has("output "):
		n, _ := strconv.Atoi(strings.Fields(text[strings.Index(text, "output ")+len("output "):] + " 0")[0])
		chunk := strings.Repeat("o", 99) + "\n"
		for range min(n, 1_000_000) {
			f.write(delta(chunk))
		}
	}
	f.write(obj{"type": "message_start", "message": assistant("", "pending", "")})
	f.write(delta("fake "))
	f.write(delta("reply"))
	f.write(assistantEnd("fake reply", "stop", ""))
	f.write(obj{"type": "turn_end", "message": assistant("fake reply", "stop", ""), "toolResults": []any{}})
	f.settle()
	return 0, false
}

// transcript is rpc-transcript.v1 (taskbar-contract/schemas).
type transcript struct {
	ContractVersion int    `json:"contract_version"`
	Name            string `json:"name"`
	Steps           []struct {
		Direction string          `json:"direction"`
		Message   json.RawMessage `json:"message"`
	} `json:"steps"`
}

// replay plays the transcript; ok false means exit with code.
func (f *fake) replay() (code int, ok bool) {
	b, err := os.ReadFile(f.transcript)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakepi: cannot read transcript")
		return 2, false
	}
	var tr transcript
	if err := json.Unmarshal(b, &tr); err != nil || tr.ContractVersion != 1 {
		fmt.Fprintln(os.Stderr, "fakepi: bad transcript")
		return 2, false
	}
	ids := map[string]string{} // fixture id -> client id
	for i, st := range tr.Steps {
		var want command
		if err := json.Unmarshal(st.Message, &want); err != nil {
			fmt.Fprintf(os.Stderr, "fakepi: step %d: bad message\n", i)
			return 2, false
		}
		switch st.Direction {
		case "receive":
			line, err := f.readLine()
			if err != nil {
				return 0, false
			}
			var got command
			if json.Unmarshal(line, &got) != nil || got.Type != want.Type {
				fmt.Fprintf(os.Stderr, "fakepi: step %d: want command %q, got %q\n", i, want.Type, got.Type)
				return 4, false
			}
			if want.ID != "" {
				ids[want.ID] = got.ID
			}
		case "send":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(st.Message, &m); err != nil {
				fmt.Fprintf(os.Stderr, "fakepi: step %d: bad message\n", i)
				return 2, false
			}
			if id, ok := m["id"]; ok {
				var s string
				if json.Unmarshal(id, &s) == nil {
					if real, ok := ids[s]; ok {
						m["id"], _ = json.Marshal(real)
					}
				}
			}
			f.write(m)
		}
	}
	return 0, true
}
