// Package fakepeer is a deterministic fake `pi --mode rpc` peer for the
// taskbar runtime tests: edge cases real Pi cannot produce on demand
// (malformed records, crashes, hung handshakes, vetoed resets, missed abort
// settlement) and replay of the contract RPC transcripts.
//
// # Use
//
// A test binary calls [MaybeRun] first thing in TestMain; when the
// environment variable [EnvMode] is set the binary acts as the fake Pi and
// exits. Tests start it through [Command] with extra environment.
//
// # Behaviour
//
// get_state answers sessionId "fixture-session-<n>" (n counts get_state
// calls in this process) and model {provider:"test",id:"fake-pi"}. A prompt
// is answered by keywords in its message (the upstream fake's keywords):
// "hold this task", "ignore abort", "reject abort", "dialog request",
// "bounded output", "message error", "retry failure", "compaction failure",
// "rejected command", "unexpected response", "malformed record",
// "oversized record", "non-object record", "unterminated record",
// "crash", "spawn child", "activity events", "run tool"; otherwise the
// default reply: agent_start, the delta "Implemented the whole-page
// request." and agent_settled. Startup and reset behaviour come from
// [EnvStartup] and [EnvReset].
package fakepeer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Environment variables read by the fake.
const (
	// EnvMode switches a test binary into the fake Pi: "keywords" or
	// "transcript".
	EnvMode = "TASKBAR_FAKE_PI"
	// EnvTranscript names the transcript file in transcript mode.
	EnvTranscript = "TASKBAR_FAKE_PI_TRANSCRIPT"
	// EnvStartup selects startup behaviour: "" (answer), "reject",
	// "invalid", "exit", "hang", "unexpected", or "exit-once:<file>" (exit
	// at the first get_state unless file exists, then create it), or
	// "exit-if:<file>" (exit at get_state while file exists).
	EnvStartup = "TASKBAR_FAKE_PI_STARTUP"
	// EnvReset selects new_session behaviour: "" (accept), "reject",
	// "fail", "hang", "same" (confirming get_state keeps the old sessionId),
	// "exit".
	EnvReset = "TASKBAR_FAKE_PI_RESET"
	// EnvDefaultOutput replaces the default reply's delta.
	EnvDefaultOutput = "TASKBAR_FAKE_PI_OUTPUT"
	// EnvStubborn, when "1", ignores SIGTERM and keeps running after
	// stdin ends: only SIGKILL stops the fake.
	EnvStubborn = "TASKBAR_FAKE_PI_STUBBORN"
)

// DefaultOutput is the default reply of a prompt.
const DefaultOutput = "Implemented the whole-page request."

// Env returns the environment entries (to append to the inherited one)
// that make a test binary calling [MaybeRun] act as the fake Pi in keyword
// mode, plus extra entries.
func Env(extra ...string) []string {
	return append([]string{EnvMode + "=keywords"}, extra...)
}

// MaybeRun runs the fake Pi and exits when [EnvMode] is set.
func MaybeRun() {
	switch os.Getenv(EnvMode) {
	case "":
		return
	case "transcript":
		os.Exit(replay(os.Getenv(EnvTranscript)))
	default:
		stubborn := os.Getenv(EnvStubborn) == "1"
		if stubborn {
			signal.Ignore(syscall.SIGTERM)
		}
		f := &fake{out: bufio.NewWriter(os.Stdout)}
		code := f.run()
		if stubborn {
			select {} // only SIGKILL ends this process
		}
		os.Exit(code)
	}
}

type fake struct {
	mu      sync.Mutex
	out     *bufio.Writer
	states  int
	session string
	holding string // hold mode: "", "hold", "ignore", "reject"
	aborts  int
	dialog  chan struct{}
}

func (f *fake) send(v any) {
	b, _ := json.Marshal(v)
	f.raw(string(b) + "\n")
}

func (f *fake) raw(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.WriteString(s)
	f.out.Flush()
}

type obj = map[string]any

func resp(id string, ok bool, data any) obj {
	m := obj{"type": "response", "id": id, "success": ok}
	if data != nil {
		m["data"] = data
	}
	if !ok {
		m["error"] = "provider detail /secret/path"
	}
	return m
}

func delta(s string) obj {
	return obj{"type": "message_update", "assistantMessageEvent": obj{"type": "text_delta", "delta": s}}
}

func (f *fake) run() int {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Message   string `json:"message"`
			Cancelled bool   `json:"cancelled"`
		}
		if json.Unmarshal(line, &m) != nil {
			f.send(obj{"type": "response", "command": "parse", "success": false, "error": "parse"})
			continue
		}
		switch m.Type {
		case "get_state":
			if code, done := f.getState(m.ID); done {
				return code
			}
		case "prompt":
			f.send(resp(m.ID, !strings.Contains(m.Message, "rejected command"), obj{"disposition": "started"}))
			if strings.Contains(m.Message, "rejected command") {
				continue
			}
			go f.prompt(m.Message)
		case "abort":
			f.onAbort(m.ID)
		case "new_session":
			switch os.Getenv(EnvReset) {
			case "reject":
				f.send(resp(m.ID, true, obj{"cancelled": true}))
			case "fail":
				f.send(resp(m.ID, false, nil))
			case "hang":
			case "exit":
				return 4
			default:
				f.mu.Lock()
				f.session = "" // next get_state reports a fresh session
				f.mu.Unlock()
				f.send(resp(m.ID, true, obj{"cancelled": false}))
			}
		case "extension_ui_response":
			if m.Cancelled && f.dialog != nil {
				close(f.dialog)
				f.dialog = nil
			}
		}
	}
}

func (f *fake) getState(id string) (int, bool) {
	f.states++
	mode := os.Getenv(EnvStartup)
	if strings.HasPrefix(mode, "exit-once:") {
		file := strings.TrimPrefix(mode, "exit-once:")
		if _, err := os.Stat(file); err != nil {
			os.WriteFile(file, nil, 0o600)
			return 3, true
		}
		mode = ""
	}
	if strings.HasPrefix(mode, "exit-if:") {
		if _, err := os.Stat(strings.TrimPrefix(mode, "exit-if:")); err == nil {
			return 3, true
		}
		mode = ""
	}
	f.mu.Lock()
	if f.session == "" || os.Getenv(EnvReset) != "same" {
		f.session = "fixture-session-" + strconv.Itoa(f.states)
	}
	sid := f.session
	f.mu.Unlock()
	if f.states > 1 {
		mode = "" // startup modes affect the handshake only
	}
	switch mode {
	case "reject":
		f.send(resp(id, false, nil))
	case "invalid":
		f.send(resp(id, true, obj{"sessionId": sid}))
	case "exit":
		return 3, true
	case "hang":
	case "unexpected":
		f.send(resp("not-"+id, true, nil))
	default:
		f.send(resp(id, true, obj{"sessionId": sid, "model": obj{"provider": "test", "id": "fake-pi"}}))
	}
	return 0, false
}

func (f *fake) onAbort(id string) {
	f.mu.Lock()
	mode := f.holding
	f.mu.Unlock()
	switch mode {
	case "hold":
		// Real Pi order: the run settles, then the abort response.
		f.send(obj{"type": "agent_settled", "aborted": true})
		f.send(resp(id, true, nil))
	case "ignore":
		f.aborts++
		if f.aborts > 1 {
			f.send(delta(" second abort"))
		}
		f.send(resp(id, true, nil))
	case "reject":
		f.send(resp(id, false, nil))
	default:
		f.send(resp(id, true, nil))
	}
}

func (f *fake) prompt(msg string) {
	has := func(k string) bool { return strings.Contains(msg, k) }
	f.send(obj{"type": "agent_start"})
	switch {
	case has("hold this task"), has("ignore abort"), has("reject abort"):
		mode := "hold"
		if has("ignore abort") {
			mode = "ignore"
		} else if has("reject abort") {
			mode = "reject"
		}
		f.mu.Lock()
		f.holding = mode
		f.mu.Unlock()
		f.send(delta("holding"))
		return
	case has("spawn child"):
		c := exec.Command("sleep", "300")
		c.Start()
		f.send(delta(strconv.Itoa(c.Process.Pid)))
		f.mu.Lock()
		f.holding = "hold"
		f.mu.Unlock()
		return
	case has("dialog request"):
		ch := make(chan struct{})
		f.mu.Lock()
		f.dialog = ch
		f.mu.Unlock()
		f.send(obj{"type": "extension_ui_request", "id": "dialog-1", "method": "confirm", "title": "Continue?", "message": "Continue?"})
		f.send(obj{"type": "extension_ui_request", "id": "notify-1", "method": "notify", "message": "fyi"})
		select {
		case <-ch:
			f.send(delta("dialog cancelled"))
		case <-time.After(5 * time.Second):
			f.send(delta("dialog unanswered"))
		}
	case has("bounded output"):
		chunk := strings.Repeat("a", 1000)
		for range 40 {
			f.send(delta(chunk))
		}
		f.send(delta(strings.Repeat("a", 32768) + "🙂z"))
	case has("message error"):
		f.send(obj{"type": "message_update", "assistantMessageEvent": obj{"type": "error", "reason": "error", "error": "provider detail"}})
	case has("retry failure"):
		f.send(obj{"type": "auto_retry_start", "attempt": 3, "maxAttempts": 3, "delayMs": 1, "errorMessage": "provider detail"})
		f.send(obj{"type": "auto_retry_end", "success": false, "attempt": 3, "finalError": "provider detail"})
	case has("compaction failure"):
		f.send(obj{"type": "compaction_start", "reason": "threshold"})
		f.send(obj{"type": "compaction_end", "reason": "threshold", "aborted": false, "willRetry": false, "errorMessage": "provider detail"})
	case has("unexpected response"):
		f.send(resp("nobody-asked", true, nil))
		return
	case has("malformed record"):
		f.raw("{not json\n")
		return
	case has("oversized record"):
		f.raw(`{"type":"message_update","pad":"` + strings.Repeat("x", 1_000_100) + "\"}\n")
		return
	case has("non-object record"):
		f.raw("[1,2,3]\n")
		return
	case has("unterminated record"):
		f.raw(`{"type":"agent_start"`)
		os.Stdout.Close()
		os.Exit(0)
	case has("crash"):
		f.send(delta("partial"))
		os.Exit(7)
	case has("activity events"), has("run tool"):
		f.send(delta("new output"))
		f.send(obj{"type": "tool_execution_start", "toolCallId": "t1", "toolName": "bash", "args": obj{}})
		if has("activity events") {
			f.send(obj{"type": "tool_execution_end", "toolCallId": "t1", "toolName": "bash", "isError": true})
			f.send(obj{"type": "agent_end", "messages": []any{}, "willRetry": true})
			f.send(obj{"type": "compaction_start", "reason": "overflow"})
			f.send(obj{"type": "compaction_end", "reason": "overflow", "result": obj{}, "aborted": false, "willRetry": true})
			f.send(obj{"type": "auto_retry_start", "attempt": 2, "maxAttempts": 3, "delayMs": 1, "errorMessage": "provider detail"})
			f.send(obj{"type": "future_event", "providerDetail": "ignored"})
		}
		f.mu.Lock()
		f.holding = "hold"
		f.mu.Unlock()
		return // held: the test reads the activity, then stops the task
	default:
		out := os.Getenv(EnvDefaultOutput)
		if out == "" {
			out = DefaultOutput
		}
		f.send(delta(out))
	}
	f.send(obj{"type": "agent_end", "messages": []any{}, "willRetry": false})
	f.send(obj{"type": "agent_settled", "aborted": false})
}

// replay plays a contract RPC transcript (reference taskbar.md §9): a
// receive step must equal the next input line except for "id", whose
// value is mapped to the transcript's id; send steps are written with
// mapped ids. Extra input after the last step, or a mismatch, exits 2.
func replay(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 2
	}
	var tr struct {
		Steps []struct {
			Direction string         `json:"direction"`
			Message   map[string]any `json:"message"`
		} `json:"steps"`
	}
	if json.Unmarshal(raw, &tr) != nil {
		return 2
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	ids := map[string]string{} // transcript id -> live id
	for _, st := range tr.Steps {
		if st.Direction == "send" {
			m := st.Message
			if id, ok := m["id"].(string); ok {
				if live, ok := ids[id]; ok {
					m["id"] = live
				}
			}
			b, _ := json.Marshal(m)
			os.Stdout.Write(append(b, '\n'))
			continue
		}
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 2
		}
		var got map[string]any
		if json.Unmarshal(line, &got) != nil {
			return 2
		}
		if id, ok := st.Message["id"].(string); ok {
			live, _ := got["id"].(string)
			ids[id] = live
			got["id"] = id
		}
		if !reflect.DeepEqual(got, st.Message) {
			fmt.Fprintln(os.Stderr, "fakepeer: transcript mismatch")
			return 2
		}
	}
	// Hold the process until stdin closes; any extra input is an error.
	if _, err := in.ReadBytes('\n'); err == nil {
		return 2
	}
	return 0
}
