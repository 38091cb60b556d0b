// Package fakepi is the project's one deterministic fake of `pi --mode rpc`,
// for the edge cases real Pi cannot produce on demand (reference §1 for the
// real wire). pirpc, taskbar, taskbar/runtime and taskbar/broker tests all
// use it.
//
// # Re-exec
//
// Any test binary can be the fake: it is the internal/testproc role [Role]
// ([Run] its body), registered by the binary's TestMain, and tests spawn
// os.Executable() with the env from [Command] or [Config.Env]
// (testproc.EnvRole=fakepi and the configuration). internal/pitest.Main
// registers it for you, as an optional role:
//
//	func TestMain(m *testing.M) { pitest.Main(m) }
//	...
//	exe, env, err := fakepi.Command(fakepi.Config{Scenario: "reset-reject"})
//	c, err := pirpc.Start(ctx, pirpc.Options{Executable: exe, Env: env})
//
// [Main] also runs in-process over any reader and writer, e.g. one end of
// net.Pipe with pirpc.NewClient on the other (pirpc's tests do); the
// process words that exit, sleep or ignore signals need a process of their
// own. Commands are read and records written as JSON lines with
// internal/jsonl.
//
// # Configuration
//
// [Config] is the whole surface; each field is one environment variable:
//
//	Scenario    PIKIT_FAKE_PI_SCENARIO    words, see Scenario words and Keywords
//	Transcript  PIKIT_FAKE_PI_TRANSCRIPT  rpc-transcript.v1 file to replay
//	File        PIKIT_FAKE_PI_FILE        flag file of "exit-once" and "exit-if-file"
//
// # Scenario words
//
// Scenario is split into words. These words configure the process; every
// other word is prepended to each prompt's text (so it acts as a keyword):
//
//	exit-on-start       exit with status 3 before reading stdin
//	exit-once           like exit-on-start unless File exists; creates File first
//	exit-if-file        like exit-on-start while File exists
//	startup-reject      the first get_state fails (success:false)
//	startup-invalid     the first get_state answers a sessionId but no model
//	startup-hang        the first get_state is never answered
//	startup-unexpected  the first get_state is answered under id "not-<id>"
//	reset-reject        new_session answers {cancelled:true}
//	reset-fail          new_session answers success:false
//	reset-hang          new_session is never answered
//	reset-late          new_session is answered when the next command arrives
//	reset-same          new_session is accepted but the sessionId stays
//	reset-exit          new_session makes the fake exit with status 4
//	ignore-eof          keep running after stdin ends (only a signal stops it)
//	ignore-term         also ignore SIGTERM (only SIGKILL stops it)
//	no-read             never read stdin (only a signal stops it)
//	model-unknown       every get_state reports Pi's placeholder model
//	                    {provider:"unknown", id:"unknown"} and every prompt
//	                    fails with [NoAPIKeyError], as real Pi with no model
//	                    configured (reference §1.4)
//
// get_state answers sessionId "fake-session-<n>" (n counts accepted resets)
// and model {provider:"test", id:"fake-pi"}.
//
// # Keywords
//
// A prompt's text, with the scenario's other words prepended, selects the
// behaviour; the first matching keyword wins (matching is by substring, so
// "hold this task" is "hold" and "rejected command" is "reject"):
//
//	reject reset        later new_session answers {cancelled:true}
//	fail reset          later new_session answers success:false
//	hang reset          later new_session never answers
//	reject abort        held run (as "hold"); abort answers success:false
//	ignore abort        held run; abort answers success but the run never
//	                    settles; each later abort first streams " second abort"
//	reject              prompt fails: success:false, error "provider detail
//	                    /secret/path" (the fake's one error text, which leak
//	                    tests look for)
//	hold                run streams "holding" and stays open until abort; then
//	                    message_end, turn_end, agent_end, agent_settled{aborted:true}
//	                    and the abort response (real Pi's order)
//	spawn child         starts `sleep 300` in the fake's process group, streams
//	                    its pid, and holds
//	run tool            streams "new output", tool_execution_start "bash", holds
//	activity events     as "run tool", then a failed tool end, agent_end
//	                    willRetry, compaction with willRetry, auto_retry_start
//	                    2/3 and a future_event; holds
//	dialog request      confirm and notify requests; the answer to the confirm
//	                    streams "dialog <answer>" and settles
//	dialog              confirm request; the answer becomes a notify
//	                    "dialog <answer>"; settles
//	exit mid-task       writes "fakepi: exit mid-task" to stderr, exits with
//	                    status 3 after agent_start
//	crash               streams "partial", then as "exit mid-task"
//	unterminated        writes half a record without LF and exits 0
//	malformed           writes `{not json` during the run
//	oversized           writes a 1,000,100-byte record during the run
//	non-object          writes `[1,2,3]` during the run
//	invalid-utf8        writes a record with a 0xff byte during the run
//	unexpected response writes a response with an unknown id and a "parse"
//	                    response without id
//	message error       message_update error, assistant message_end stopReason
//	                    "error", settle
//	retry failure       agent_end willRetry, auto_retry_start/auto_retry_end
//	                    {success:false}, settle
//	compaction failure  compaction_start/compaction_end with errorMessage, settle
//	bounded output      40 deltas of 1,000 "a", then one of 32,768 "a" + "🙂z"; settle
//	tool                tool_execution_start/update/end of "bash"
//	unknown event       writes {"type":"future_event"}
//	output N            N text deltas of 100 bytes each
//	(anything else)     streams [DefaultReply] in two deltas and settles
//
// The keywords from "malformed" to "output N" then stream the default
// reply, so the run goes on after the bad record. A prompt during a held run
// needs streamingBehavior (then it is queued), as in Pi. The answer of a
// dialog is "cancelled", "confirmed=<bool>" or "value=<v>".
//
// # Transcripts
//
// With Transcript the fake replays an rpc-transcript.v1 file
// (../shared/taskbar-contract/fixtures/rpc/*.json, reference taskbar.md §9):
// each "receive" step reads the next command, which must equal the step's
// message once its "id" is mapped to the transcript's id; each "send" step
// writes its message with transcript ids replaced by the client's. A
// mismatch, or any command after the last step, exits with status 4; a bad
// file exits with status 2. After the last step the fake waits for stdin
// to end.
package fakepi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/testproc"
)

// Role is the internal/testproc role name of the fake in a re-executed
// test binary.
const Role = "fakepi"

// Environment variables read by [Main].
const (
	EnvScenario   = "PIKIT_FAKE_PI_SCENARIO"
	EnvTranscript = "PIKIT_FAKE_PI_TRANSCRIPT"
	EnvFile       = "PIKIT_FAKE_PI_FILE"
)

// DefaultReply is the text a prompt without a keyword streams.
const DefaultReply = "Implemented the whole-page request."

// providerDetail is every error text the fake sends: raw provider detail
// with a path, which leak tests look for in logs and snapshots.
const providerDetail = "provider detail /secret/path"

// NoAPIKeyError is the prompt error of the "model-unknown" scenario: real Pi
// 1.6.0's text without its documentation paths (reference §1.4).
const NoAPIKeyError = "No API key found for the selected model.\n\nUse /login to log into a provider via OAuth or API key."

// Config chooses the fake's behaviour; the zero value answers every
// command the normal way.
type Config struct {
	// Scenario holds space-separated words: process words (see the package
	// doc) and keywords applied to every prompt.
	Scenario string
	// Transcript is the path of an rpc-transcript.v1 JSON file to replay.
	Transcript string
	// File is the flag file of the "exit-once" and "exit-if-file" words.
	File string
}

// Env returns the environment entries that make a re-executed test binary
// run as the fake with cfg: testproc.RoleEnv([Role]) and cfg's variables.
// The binary's TestMain must register [Role].
func (cfg Config) Env() []string {
	env := testproc.RoleEnv(Role)
	for _, kv := range [][2]string{{EnvScenario, cfg.Scenario}, {EnvTranscript, cfg.Transcript}, {EnvFile, cfg.File}} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	return env
}

// Command returns the executable (this test binary) and the extra
// environment that run the fake with cfg. The binary's TestMain must
// register [Role].
func Command(cfg Config) (exe string, env []string, err error) {
	exe, err = os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("fakepi: executable: %w", err)
	}
	return exe, cfg.Env(), nil
}

// Run is the body of [Role] (a testproc.Role): [Main] over the process's
// stdin, stdout, args and environment.
func Run(args []string) int { return Main(os.Stdin, os.Stdout, args, os.Environ()) }

// processWords are the Scenario words that configure the process rather
// than prompts.
var processWords = []string{
	"exit-on-start", "exit-once", "exit-if-file",
	"startup-reject", "startup-invalid", "startup-hang", "startup-unexpected",
	"reset-reject", "reset-fail", "reset-hang", "reset-late", "reset-same", "reset-exit",
	"ignore-eof", "ignore-term", "no-read", "model-unknown",
}

// Main runs the fake Pi until stdin ends and returns the exit status. args
// are the command-line arguments without the program name; they must hold
// "--mode rpc". env holds KEY=VALUE entries (the last of a key wins).
func Main(stdin io.Reader, stdout io.Writer, args []string, env []string) int {
	if i := slices.Index(args, "--mode"); i < 0 || i+1 >= len(args) || args[i+1] != "rpc" {
		fmt.Fprintln(os.Stderr, "fakepi: want --mode rpc")
		return 2
	}
	f := &fake{
		in:         jsonl.NewReader(stdin, maxCommand),
		out:        jsonl.NewWriter(stdout),
		raw:        stdout,
		words:      map[string]bool{},
		sessionN:   1,
		transcript: lookup(env, EnvTranscript),
	}
	var keywords []string
	for _, w := range strings.Fields(strings.ToLower(lookup(env, EnvScenario))) {
		if slices.Contains(processWords, w) {
			f.words[w] = true
		} else {
			keywords = append(keywords, w)
		}
	}
	f.keywords = strings.Join(keywords, " ")
	for _, m := range []string{"reject", "fail", "hang", "late", "same", "exit"} {
		if f.words["reset-"+m] {
			f.resetMode = m
		}
	}
	for _, m := range []string{"reject", "invalid", "hang", "unexpected"} {
		if f.words["startup-"+m] {
			f.startupMode = m
		}
	}
	file := lookup(env, EnvFile)
	_, statErr := os.Stat(file)
	switch {
	case f.words["exit-on-start"],
		f.words["exit-if-file"] && file != "" && statErr == nil:
		return 3
	case f.words["exit-once"] && file != "" && statErr != nil:
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fakepi: cannot create the flag file")
			return 2
		}
		return 3
	}
	if f.words["ignore-term"] {
		signal.Ignore(syscall.SIGTERM)
	}
	if f.words["no-read"] {
		for { // never reads stdin: the client's writes back up
			time.Sleep(time.Hour)
		}
	}
	var code int
	if f.transcript != "" {
		code = f.replay()
	} else {
		code = f.serve()
	}
	if f.words["ignore-eof"] || f.words["ignore-term"] {
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
	case "echo":
		f.echo(c)
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
			if f.dialogDelta {
				f.write(delta("dialog " + answer))
			} else {
				f.write(obj{"type": "extension_ui_request", "id": "fake-notify-1", "method": "notify", "message": "dialog " + answer, "notifyType": "info"})
			}
			f.settle()
		}
	default:
		f.fail(c, "Unknown command: "+c.Type)
	}
	return 0, false
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

// abort answers an abort; a held run ends as its abortMode says.
func (f *fake) abort(c command) {
	if !f.holding {
		f.respond(c, nil)
		return
	}
	f.aborts++
	switch f.abortMode {
	case "reject":
		f.fail(c, providerDetail)
	case "ignore":
		if f.aborts > 1 {
			f.write(delta(" second abort"))
		}
		f.respond(c, nil)
	default:
		f.holding = false
		f.write(assistantEnd("partial", "aborted", "Request was aborted"))
		f.write(obj{"type": "turn_end", "message": assistant("partial", "aborted", "Request was aborted"), "toolResults": []any{}})
		f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": false})
		f.write(obj{"type": "agent_settled", "aborted": true})
		f.respond(c, nil)
	}
}

func assistant(text, stop, errMsg string) obj {
	m := obj{"role": "assistant", "content": []any{obj{"type": "text", "text": text}}, "api": "openai-completions",
		"provider": "test", "model": "fake-pi", "stopReason": stop, "timestamp": 1}
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

// hold keeps the run open until abort; mode is the fake's answer to it.
func (f *fake) hold(mode string) {
	f.holding, f.abortMode, f.aborts = true, mode, 0
}

func (f *fake) prompt(c command) (int, bool) {
	text := strings.ToLower(f.keywords + " " + c.Message)
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
	if f.words["model-unknown"] {
		f.fail(c, NoAPIKeyError)
		return 0, false
	}
	abortMode := ""
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
	case has("reject abort"):
		abortMode = "reject"
	case has("ignore abort"):
		abortMode = "ignore"
	case has("reject"):
		f.fail(c, providerDetail)
		return 0, false
	}
	f.respond(c, obj{"disposition": "started"})
	f.write(obj{"type": "agent_start"})
	f.write(obj{"type": "turn_start"})
	switch {
	case abortMode != "" || has("hold"):
		f.hold(abortMode)
		f.write(obj{"type": "message_start", "message": assistant("", "pending", "")})
		f.write(delta("holding"))
		return 0, false
	case has("spawn child"):
		// The child joins the fake's process group, like a tool's command.
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakepi: cannot spawn child")
			return 3, true
		}
		f.hold("")
		f.write(delta(strconv.Itoa(child.Process.Pid)))
		return 0, false
	case has("run tool"), has("activity events"):
		f.hold("")
		f.write(delta("new output"))
		f.write(obj{"type": "tool_execution_start", "toolCallId": "t1", "toolName": "bash", "args": obj{}})
		if has("activity events") {
			f.write(obj{"type": "tool_execution_end", "toolCallId": "t1", "toolName": "bash", "result": obj{"content": []any{}}, "isError": true})
			f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": true})
			f.write(obj{"type": "compaction_start", "reason": "overflow"})
			f.write(obj{"type": "compaction_end", "reason": "overflow", "result": obj{}, "aborted": false, "willRetry": true})
			f.write(obj{"type": "auto_retry_start", "attempt": 2, "maxAttempts": 3, "delayMs": 1, "errorMessage": providerDetail})
			f.write(obj{"type": "future_event", "providerDetail": "ignored"})
		}
		return 0, false
	case has("dialog request"):
		f.dialogID, f.dialogDelta = "fake-dialog-1", true
		f.write(obj{"type": "extension_ui_request", "id": f.dialogID, "method": "confirm", "title": "Continue?", "message": "Continue?"})
		f.write(obj{"type": "extension_ui_request", "id": "fake-notify-1", "method": "notify", "message": "fyi"})
		return 0, false
	case has("dialog"):
		f.dialogID, f.dialogDelta = "fake-dialog-1", false
		f.write(obj{"type": "extension_ui_request", "id": f.dialogID, "method": "confirm", "title": "Continue?", "message": "Continue?"})
		return 0, false
	case has("exit mid-task"), has("crash"):
		if has("crash") {
			f.write(delta("partial"))
		}
		fmt.Fprintln(os.Stderr, "fakepi: exit mid-task")
		return 3, true
	case has("unterminated"):
		f.raw.Write([]byte(`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","del`))
		return 0, true
	case has("malformed"):
		f.writeLine([]byte("{not json"))
	case has("oversized"):
		f.writeLine(append(append([]byte(`{"type":"message_update","pad":"`), bytes.Repeat([]byte("x"), 1_000_100-36)...), '"', '}'))
	case has("non-object"):
		f.writeLine([]byte("[1,2,3]"))
	case has("invalid-utf8"):
		f.writeLine([]byte("{\"type\":\"message_update\",\"x\":\"\xff\"}"))
	case has("unexpected response"):
		f.write(obj{"type": "response", "id": "nobody-asked", "command": "get_state", "success": true})
		f.write(obj{"type": "response", "command": "parse", "success": false, "error": "Failed to parse command"})
	case has("message error"):
		f.write(obj{"type": "message_update", "assistantMessageEvent": obj{"type": "error", "reason": "error", "error": providerDetail}})
		f.write(assistantEnd("", "error", providerDetail))
		f.settle()
		return 0, false
	case has("retry failure"):
		f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": true})
		f.write(obj{"type": "auto_retry_start", "attempt": 3, "maxAttempts": 3, "delayMs": 1, "errorMessage": providerDetail})
		f.write(obj{"type": "auto_retry_end", "success": false, "attempt": 3, "finalError": providerDetail})
		f.write(obj{"type": "agent_settled", "aborted": false})
		return 0, false
	case has("compaction failure"):
		f.write(obj{"type": "compaction_start", "reason": "threshold"})
		f.write(obj{"type": "compaction_end", "reason": "threshold", "result": nil, "aborted": false, "willRetry": false, "errorMessage": providerDetail})
		f.settle()
		return 0, false
	case has("bounded output"):
		chunk := strings.Repeat("a", 1000)
		for range 40 {
			f.write(delta(chunk))
		}
		f.write(delta(strings.Repeat("a", 32768) + "🙂z"))
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
	first, rest, _ := strings.Cut(DefaultReply, " ")
	f.write(obj{"type": "message_start", "message": assistant("", "pending", "")})
	f.write(delta(first + " "))
	f.write(delta(rest))
	f.write(assistantEnd(DefaultReply, "stop", ""))
	f.write(obj{"type": "turn_end", "message": assistant(DefaultReply, "stop", ""), "toolResults": []any{}})
	f.settle()
	return 0, false
}

// transcript is rpc-transcript.v1 (taskbar-contract/schemas).
type transcript struct {
	ContractVersion int    `json:"contract_version"`
	Name            string `json:"name"`
	Steps           []struct {
		Direction string         `json:"direction"`
		Message   map[string]any `json:"message"`
	} `json:"steps"`
}

// replay plays the transcript, then waits for stdin to end, and returns
// the exit status.
func (f *fake) replay() int {
	b, err := os.ReadFile(f.transcript)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakepi: cannot read transcript")
		return 2
	}
	var tr transcript
	if err := json.Unmarshal(b, &tr); err != nil || tr.ContractVersion != 1 {
		fmt.Fprintln(os.Stderr, "fakepi: bad transcript")
		return 2
	}
	ids := map[string]string{} // transcript id -> client id
	for i, st := range tr.Steps {
		switch st.Direction {
		case "receive":
			line, err := f.readLine()
			if err != nil {
				return 0
			}
			var got map[string]any
			if json.Unmarshal(line, &got) != nil {
				fmt.Fprintf(os.Stderr, "fakepi: step %d: command is not a JSON object\n", i)
				return 4
			}
			if id, ok := st.Message["id"].(string); ok {
				client, _ := got["id"].(string)
				ids[id] = client
				got["id"] = id
			}
			if !reflect.DeepEqual(got, st.Message) {
				fmt.Fprintf(os.Stderr, "fakepi: step %d: command %v differs from the transcript's %v\n", i, got["type"], st.Message["type"])
				return 4
			}
		case "send":
			m := st.Message
			if id, ok := m["id"].(string); ok {
				if client, ok := ids[id]; ok {
					m["id"] = client
				}
			}
			f.write(m)
		default:
			fmt.Fprintf(os.Stderr, "fakepi: step %d: bad direction\n", i)
			return 2
		}
	}
	if _, err := f.readLine(); err == nil {
		fmt.Fprintln(os.Stderr, "fakepi: command after the last transcript step")
		return 4
	}
	return 0
}
