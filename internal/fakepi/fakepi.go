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
//	ignore-term         also ignore SIGTERM and SIGINT (Windows: CTRL_BREAK);
//	                    only SIGKILL stops it
//	sleep-300           sleep 300 s, then exit 0 (the child of "spawn child")
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
//	spawn child         starts this binary as a "sleep-300" fake in the fake's
//	                    process group, streams its pid, and holds
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
//
// # Files
//
//	fakepi.go           Config, Main and the process words
//	commands.go         the command loop: get_state, new_session, echo, dialog answers
//	prompt.go           prompt keywords and the table of run scenarios
//	scenario_held.go    runs held until abort or a dialog's answer; abort
//	scenario_faults.go  runs that exit, write bad records or fail
//	scenario_output.go  runs that stream more than the default reply
//	records.go          the records runs are made of
//	replay.go           transcript replay
package fakepi

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/platform"
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
	"ignore-eof", "ignore-term", "no-read", "model-unknown", "sleep-300",
}

// Main runs the fake Pi until stdin ends and returns the exit status. args
// are the command-line arguments without the program name; they must hold
// "--mode rpc". env holds KEY=VALUE entries (the last of a key wins).
func Main(stdin io.Reader, stdout io.Writer, args []string, env []string) int {
	if i := slices.Index(args, "--mode"); i < 0 || i+1 >= len(args) || args[i+1] != "rpc" {
		fmt.Fprintln(os.Stderr, "fakepi: want --mode rpc")
		return 2
	}
	f := newFake(stdin, stdout, env)
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
	if f.words["sleep-300"] {
		time.Sleep(300 * time.Second)
		return 0
	}
	if f.words["ignore-term"] {
		signal.Ignore(platform.ShutdownSignals()...) // Windows: CTRL_BREAK is os.Interrupt
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

// newFake makes the fake of env's scenario and transcript, reading
// commands from stdin and writing records to stdout.
func newFake(stdin io.Reader, stdout io.Writer, env []string) *fake {
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
	return f
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
