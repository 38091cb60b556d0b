package fakepi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

func TestMain(m *testing.M) { pitest.Main(m) }

var rpcArgs = []string{"--mode", "rpc"}

// run feeds commands to Main and returns the status and the records written,
// each as its event type, "response:<id>:<ok>" or "error:<kind>".
func run(t *testing.T, env []string, cmds ...string) (int, []string) {
	t.Helper()
	var out bytes.Buffer
	code := fakepi.Main(strings.NewReader(strings.Join(cmds, "\n")+"\n"), &out, rpcArgs, env)
	var recs []string
	d := pirpc.NewDecoder(&out)
	for {
		rec, err := d.Next()
		if err == io.EOF {
			return code, recs
		}
		if err != nil {
			var pe *pirpc.ProtocolError
			if !errors.As(err, &pe) {
				t.Fatal(err)
			}
			recs = append(recs, "error:"+strings.TrimPrefix(pe.Kind.Error(), "pirpc: "))
			continue
		}
		switch r := rec.(type) {
		case *pirpc.Response:
			ok := "ok"
			if !r.Success {
				ok = "fail"
			}
			recs = append(recs, "response:"+r.ID+":"+ok)
		case pirpc.Event:
			recs = append(recs, r.EventType())
		}
	}
}

func prompt(msg string) string {
	b, _ := json.Marshal(map[string]string{"id": "p", "type": "prompt", "message": msg})
	return string(b)
}

func TestMain_Keywords(t *testing.T) {
	normalEnd := []string{"message_start", "message_update", "message_update", "message_end", "turn_end", "agent_end", "agent_settled"}
	start := []string{"response:p:ok", "agent_start", "turn_start"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name     string
		cmds     []string
		wantCode int
		want     []string
	}{
		{"plain", []string{prompt("hi")}, 0, cat(start, normalEnd)},
		{"reject", []string{prompt("reject")}, 0, []string{"response:p:fail"}},
		{"malformed", []string{prompt("malformed")}, 0, cat(start, []string{"error:malformed json"}, normalEnd)},
		{"oversized", []string{prompt("oversized")}, 0, cat(start, []string{"error:record too large"}, normalEnd)},
		{"non-object", []string{prompt("non-object")}, 0, cat(start, []string{"error:record is not an object"}, normalEnd)},
		{"invalid utf8", []string{prompt("invalid-utf8")}, 0, cat(start, []string{"error:record is not valid utf-8"}, normalEnd)},
		{"unterminated", []string{prompt("unterminated")}, 0, cat(start, []string{"error:unterminated record at end of input"})},
		{"unexpected response", []string{prompt("unexpected response")}, 0, cat(start, []string{"response:nobody-asked:ok", "response::fail"}, normalEnd)},
		{"exit mid-task", []string{prompt("exit mid-task")}, 3, start},
		{"message error", []string{prompt("message error")}, 0, cat(start, []string{"message_update", "message_end", "agent_end", "agent_settled"})},
		{"retry failure", []string{prompt("retry failure")}, 0, cat(start, []string{"agent_end", "auto_retry_start", "auto_retry_end", "agent_settled"})},
		{"compaction failure", []string{prompt("compaction failure")}, 0, cat(start, []string{"compaction_start", "compaction_end", "agent_end", "agent_settled"})},
		{"tool", []string{prompt("tool")}, 0, cat(start, []string{"tool_execution_start", "tool_execution_update", "tool_execution_end"}, normalEnd)},
		{"unknown event", []string{prompt("unknown event")}, 0, cat(start, []string{"future_event"}, normalEnd)},
		{"output", []string{prompt("output 2")}, 0, cat(start, []string{"message_update", "message_update"}, normalEnd)},
		{"hold then abort", []string{prompt("hold"), `{"id":"a","type":"abort"}`}, 0,
			cat(start, []string{"message_start", "message_update", "message_end", "turn_end", "agent_end", "agent_settled", "response:a:ok"})},
		{"hold rejects a plain prompt", []string{prompt("hold"), `{"id":"q","type":"prompt","message":"x"}`}, 0,
			cat(start, []string{"message_start", "message_update", "response:q:fail"})},
		{"dialog answered", []string{prompt("dialog"), `{"type":"extension_ui_response","id":"fake-dialog-1","cancelled":true}`}, 0,
			cat(start, []string{"extension_ui_request", "extension_ui_request", "agent_end", "agent_settled"})},
		{"reject abort", []string{prompt("reject abort"), `{"id":"a","type":"abort"}`}, 0,
			cat(start, []string{"message_start", "message_update", "response:a:fail"})},
		{"ignore abort", []string{prompt("ignore abort"), `{"id":"a","type":"abort"}`, `{"id":"b","type":"abort"}`}, 0,
			cat(start, []string{"message_start", "message_update", "response:a:ok", "message_update", "response:b:ok"})},
		{"rejected command", []string{prompt("rejected command")}, 0, []string{"response:p:fail"}},
		{"crash", []string{prompt("crash")}, 3, cat(start, []string{"message_update"})},
		{"run tool", []string{prompt("run tool")}, 0, cat(start, []string{"message_update", "tool_execution_start"})},
		{"activity events", []string{prompt("activity events")}, 0, cat(start, []string{"message_update", "tool_execution_start",
			"tool_execution_end", "agent_end", "compaction_start", "compaction_end", "auto_retry_start", "future_event"})},
		{"dialog request answered", []string{prompt("dialog request"), `{"type":"extension_ui_response","id":"fake-dialog-1","cancelled":true}`}, 0,
			cat(start, []string{"extension_ui_request", "extension_ui_request", "message_update", "agent_end", "agent_settled"})},
		{"reset ok", []string{`{"id":"r","type":"new_session"}`}, 0, []string{"response:r:ok"}},
		{"reset fail by prompt", []string{prompt("fail reset"), `{"id":"r","type":"new_session"}`}, 0, []string{"response:p:ok", "response:r:fail"}},
		{"reset hang by prompt", []string{prompt("hang reset"), `{"id":"r","type":"new_session"}`}, 0, []string{"response:p:ok"}},
		{"parse error", []string{`{nope`}, 0, []string{"response::fail"}},
		{"unknown command", []string{`{"id":"u","type":"nope"}`}, 0, []string{"response:u:fail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := run(t, nil, tt.cmds...)
			if code != tt.wantCode {
				t.Errorf("status %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMain_ResetScenarios(t *testing.T) {
	for _, tt := range []struct{ scenario, want string }{
		{"reset-reject", `"cancelled":true`}, {"reset-fail", `"success":false`},
	} {
		var out bytes.Buffer
		fakepi.Main(strings.NewReader(`{"id":"r","type":"new_session"}`+"\n"), &out, rpcArgs,
			fakepi.Config{Scenario: tt.scenario}.Env())
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("%s: %s", tt.scenario, out.String())
		}
	}
}

// TestMain_Texts checks the text the runtime tests read: the concatenated
// text deltas of a run.
func TestMain_Texts(t *testing.T) {
	for _, tt := range []struct{ msg, want string }{
		{"plain", fakepi.DefaultReply},
		{"hold this task", "holding"},
		{"crash", "partial"},
		{"run tool", "new output"},
		{"bounded output", strings.Repeat("a", 40*1000+32768) + "🙂z"},
	} {
		var out bytes.Buffer
		fakepi.Main(strings.NewReader(prompt(tt.msg)+"\n"), &out, rpcArgs, nil)
		var got strings.Builder
		d := pirpc.NewDecoder(&out)
		for {
			rec, err := d.Next()
			if err != nil {
				break
			}
			if u, ok := rec.(*pirpc.MessageUpdate); ok {
				got.WriteString(u.AssistantMessageEvent.Delta)
			}
		}
		if got.String() != tt.want {
			t.Errorf("%q streams %.60q, want %.60q", tt.msg, got.String(), tt.want)
		}
	}
}

func TestMain_ScenarioWords(t *testing.T) {
	state := func(id string) string { return `{"id":"` + id + `","type":"get_state"}` }
	tests := []struct {
		name     string
		scenario string
		cmds     []string
		wantCode int
		want     []string
	}{
		{"startup-reject", "startup-reject", []string{state("s"), state("t")}, 0, []string{"response:s:fail", "response:t:ok"}},
		{"startup-invalid", "startup-invalid", []string{state("s"), state("t")}, 0, []string{"response:s:ok", "response:t:ok"}},
		{"startup-hang", "startup-hang", []string{state("s"), state("t")}, 0, []string{"response:t:ok"}},
		{"startup-unexpected", "startup-unexpected", []string{state("s"), state("t")}, 0, []string{"response:not-s:ok", "response:t:ok"}},
		{"reset-exit", "reset-exit", []string{`{"id":"r","type":"new_session"}`, state("s")}, 4, nil},
		{"exit-on-start", "exit-on-start", []string{state("s")}, 3, nil},
		{"process words are not keywords", "reset-reject", []string{prompt("plain")}, 0,
			[]string{"response:p:ok", "agent_start", "turn_start", "message_start", "message_update", "message_update", "message_end", "turn_end", "agent_end", "agent_settled"}},
		{"other words are keywords", "reject", []string{prompt("plain")}, 0, []string{"response:p:fail"}},
		{"model-unknown", "model-unknown", []string{state("s"), prompt("plain"), state("t")}, 0,
			[]string{"response:s:ok", "response:p:fail", "response:t:ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := run(t, fakepi.Config{Scenario: tt.scenario}.Env(), tt.cmds...)
			if code != tt.wantCode {
				t.Errorf("status %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMain_States checks the get_state data the scenario words shape.
func TestMain_States(t *testing.T) {
	cmds := `{"id":"a","type":"get_state"}` + "\n" + `{"id":"r","type":"new_session"}` + "\n" + `{"id":"b","type":"get_state"}` + "\n"
	sessions := func(scenario string) []string {
		var out bytes.Buffer
		fakepi.Main(strings.NewReader(cmds), &out, rpcArgs, fakepi.Config{Scenario: scenario}.Env())
		var ids []string
		for line := range strings.Lines(out.String()) {
			var r struct {
				Data struct {
					SessionID string `json:"sessionId"`
					Model     *struct{ Provider, ID string }
				} `json:"data"`
			}
			json.Unmarshal([]byte(line), &r)
			if r.Data.SessionID != "" {
				model := "none"
				if r.Data.Model != nil {
					model = r.Data.Model.Provider + "/" + r.Data.Model.ID
				}
				ids = append(ids, r.Data.SessionID+" "+model)
			}
		}
		return ids
	}
	for _, tt := range []struct {
		scenario string
		want     []string
	}{
		{"", []string{"fake-session-1 test/fake-pi", "fake-session-2 test/fake-pi"}},
		{"reset-same", []string{"fake-session-1 test/fake-pi", "fake-session-1 test/fake-pi"}},
		{"startup-invalid", []string{"fake-session-1 none", "fake-session-2 test/fake-pi"}},
		{"model-unknown", []string{"fake-session-1 unknown/unknown", "fake-session-2 unknown/unknown"}},
	} {
		if diff := cmp.Diff(tt.want, sessions(tt.scenario)); diff != "" {
			t.Errorf("scenario %q sessions (-want +got):\n%s", tt.scenario, diff)
		}
	}
}

// TestMain_ModelUnknownPromptError: with no model, a prompt fails with real
// Pi's "No API key" text (reference §1.4), not the leak-test detail.
func TestMain_ModelUnknownPromptError(t *testing.T) {
	var out bytes.Buffer
	fakepi.Main(strings.NewReader(prompt("plain")+"\n"), &out, rpcArgs, fakepi.Config{Scenario: "model-unknown"}.Env())
	var r struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if r.Success || r.Error != fakepi.NoAPIKeyError || !strings.HasPrefix(r.Error, "No API key found for the selected model.") {
		t.Errorf("prompt response = %+v", r)
	}
}

func TestMain_FlagFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flag")
	main := func(scenario string) int {
		return fakepi.Main(strings.NewReader(""), io.Discard, rpcArgs, fakepi.Config{Scenario: scenario, File: file}.Env())
	}
	if got := main("exit-if-file"); got != 0 {
		t.Errorf("exit-if-file without the file: status %d, want 0", got)
	}
	if got := main("exit-once"); got != 3 {
		t.Errorf("first exit-once: status %d, want 3", got)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("exit-once did not create the file: %v", err)
	}
	if got := main("exit-once"); got != 0 {
		t.Errorf("second exit-once: status %d, want 0", got)
	}
	if got := main("exit-if-file"); got != 3 {
		t.Errorf("exit-if-file with the file: status %d, want 3", got)
	}
}

func TestMain_RequiresRPCMode(t *testing.T) {
	if code := fakepi.Main(strings.NewReader(""), io.Discard, nil, nil); code != 2 {
		t.Errorf("status %d without --mode rpc, want 2", code)
	}
}

// TestMain_ReplaysTranscripts plays every contract transcript in-process:
// the client side sends the "receive" messages with other ids, and the fake
// must answer exactly the "send" messages with those ids.
func TestMain_ReplaysTranscripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(pitest.SharedDir(t), "taskbar-contract", "fixtures", "rpc", "*.json"))
	if len(files) == 0 {
		t.Fatal("no rpc fixtures")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var tr struct {
				Steps []struct {
					Direction string         `json:"direction"`
					Message   map[string]any `json:"message"`
				} `json:"steps"`
			}
			if err := json.Unmarshal(b, &tr); err != nil {
				t.Fatal(err)
			}
			var in bytes.Buffer
			var want []map[string]any
			ids := map[string]string{}
			for _, st := range tr.Steps {
				m := st.Message
				if id, ok := m["id"].(string); ok {
					if st.Direction == "receive" && m["type"] != "extension_ui_response" {
						ids[id] = "client-" + id
						m["id"] = ids[id]
					} else if real, ok := ids[id]; ok {
						m["id"] = real
					}
				}
				line, _ := json.Marshal(m)
				if st.Direction == "receive" {
					in.Write(append(line, '\n'))
				} else {
					want = append(want, m)
				}
			}
			var out bytes.Buffer
			code := fakepi.Main(&in, &out, rpcArgs, fakepi.Config{Transcript: file}.Env())
			if code != 0 {
				t.Fatalf("status %d", code)
			}
			var got []map[string]any
			for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("fake wrote %q: %v", line, err)
				}
				got = append(got, m)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sends (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMain_TranscriptMismatchExits4(t *testing.T) {
	file := filepath.Join(pitest.SharedDir(t), "taskbar-contract", "fixtures", "rpc", "startup-success.json")
	code := fakepi.Main(strings.NewReader(`{"id":"x","type":"abort"}`+"\n"), io.Discard, rpcArgs, fakepi.Config{Transcript: file}.Env())
	if code != 4 {
		t.Errorf("status %d, want 4", code)
	}
}

// TestMain_TranscriptIsExact: a command must equal the transcript's (not
// only its type), and nothing may follow the last step.
func TestMain_TranscriptIsExact(t *testing.T) {
	file := filepath.Join(pitest.SharedDir(t), "taskbar-contract", "fixtures", "rpc", "startup-success.json")
	for name, in := range map[string]string{
		"extra field":         `{"id":"x","type":"get_state","extra":1}`,
		"command after steps": `{"id":"x","type":"get_state"}` + "\n" + `{"id":"y","type":"get_state"}`,
	} {
		code := fakepi.Main(strings.NewReader(in+"\n"), io.Discard, rpcArgs, fakepi.Config{Transcript: file}.Env())
		if code != 4 {
			t.Errorf("%s: status %d, want 4", name, code)
		}
	}
}

// TestCommand_ReExec runs this test binary as the fake, as other packages do.
func TestCommand_ReExec(t *testing.T) {
	exe, env, err := fakepi.Command(fakepi.Config{Scenario: "exit-on-start"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--mode", "rpc")
	cmd.Env = append(os.Environ(), env...)
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit-on-start: %v, want status 3", err)
	}
	exe, env, _ = fakepi.Command(fakepi.Config{})
	cmd = exec.Command(exe, "--mode", "rpc")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(`{"id":"s","type":"get_state"}` + "\n")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"sessionId":"fake-session-1"`) {
		t.Errorf("get_state via re-exec: %v %q", err, out)
	}
}

// FuzzMain: any stdin makes the fake answer with JSON lines or the
// deliberately bad records of its keywords, and never panics.
func FuzzMain(f *testing.F) {
	f.Add([]byte(`{"id":"1","type":"get_state"}` + "\n" + `{"id":"2","type":"prompt","message":"hold"}` + "\n" + `{"id":"3","type":"abort"}`))
	f.Add([]byte(`{"type":"extension_ui_response","id":"fake-dialog-1","confirmed":true}` + "\n{bad\n"))
	f.Add([]byte(`{"id":"2","type":"prompt","message":"output 3"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if bytes.Contains(bytes.ToLower(in), []byte("output ")) {
			t.Skip("output N writes up to 1e6 records")
		}
		if bytes.Contains(bytes.ToLower(in), []byte("spawn child")) {
			t.Skip("spawn child starts a process")
		}
		var out bytes.Buffer
		fakepi.Main(bytes.NewReader(in), &out, rpcArgs, nil)
	})
}
