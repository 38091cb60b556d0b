//go:build unix

package pirpc_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// writeScript writes an executable /bin/sh script standing in for Pi, for
// process shapes the fake Pi peer cannot take (a leftover grandchild).
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pi")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// holdersGone returns a channel closed when every writer of the FIFO at
// path has exited (the read end sees EOF). The script opens it as fd 3,
// which the grandchild inherits: EOF means both are dead.
func holdersGone(t *testing.T, path string) <-chan struct{} {
	_, gone := fifoHolders(t, path)
	return gone
}

// fifoHolders is holdersGone that also reports when the first writer
// opened the FIFO.
func fifoHolders(t *testing.T, path string) (opened, gone <-chan struct{}) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	o, g := make(chan struct{}), make(chan struct{})
	go func() { // owner: the test; ends at EOF, or when the test's cleanup opens the FIFO
		defer close(g)
		f, err := os.Open(path) // blocks until a writer opens it
		close(o)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(io.Discard, f)
	}()
	t.Cleanup(func() { // unblock the reader if no writer ever came
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return o, g
}

// A tool run (bash) that leaves a background child keeps Pi's stdout pipe
// open after Pi exited: a reader that waits for EOF hangs for the child's
// lifetime (golang/go#60309, tinylibs/tinyexec#138, openai/codex#6575).
// Close must still return within its bounds and kill the whole process
// group, also when Pi had already exited on its own or on stdin EOF.
func TestClient_CloseKillsLeftoverGrandchild(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"pi exits on its own", `exec 3>"$PIRPC_TEST_FIFO"
sleep 300 &
echo '{"type":"agent_settled","aborted":false}'
exit 0
`},
		{"pi exits on stdin EOF", `exec 3>"$PIRPC_TEST_FIFO"
sleep 300 &
echo '{"type":"agent_settled","aborted":false}'
while read -r line; do :; done
exit 0
`},
		{"pi ignores EOF and SIGTERM", `exec 3>"$PIRPC_TEST_FIFO"
trap '' TERM
sleep 300 &
echo '{"type":"agent_settled","aborted":false}'
while :; do read -r line || sleep 1; done
`},
	}
	for _, tt := range tests {
		for _, watch := range exitWatches {
			t.Run(tt.name+"/"+watch.name, func(t *testing.T) {
				fifo := filepath.Join(t.TempDir(), "holders")
				gone := holdersGone(t, fifo)
				c, err := pirpc.Start(testCtx(t), watch.opts(pirpc.Options{
					Executable:        writeScript(t, tt.body),
					Env:               []string{"PIRPC_TEST_FIFO=" + fifo},
					TerminateDuration: 50 * time.Millisecond,
					KillDuration:      50 * time.Millisecond,
					DrainDuration:     50 * time.Millisecond,
				}))
				if err != nil {
					t.Fatal(err)
				}
				ctx := testCtx(t)
				pitest.Until(t, ctx, c, settled) // the grandchild runs
				closed := make(chan error, 1)
				go func() { closed <- c.Close(ctx) }()
				select {
				case err := <-closed:
					if err != nil {
						t.Fatalf("Close: %v", err)
					}
				case <-ctx.Done():
					t.Fatal("Close did not return")
				}
				select {
				case <-gone:
				case <-time.After(10 * time.Second):
					t.Fatal("a process of Pi's group outlived Close")
				}
				var ee *pirpc.ExitError
				if !errors.As(c.Err(), &ee) {
					t.Errorf("Err = %v, want *ExitError", c.Err())
				}
			})
		}
	}
}

// Odd records Pi (or a Pi extension, or a broken pipe) can write. Each row
// keeps what the decoder makes of it; the stream always goes on.
func TestDecoder_OddRecords(t *testing.T) {
	pad := func(n int) string { // a record of exactly n bytes
		return `{"type":"x","pad":"` + strings.Repeat("a", n-len(`{"type":"x","pad":""}`)) + `"}`
	}
	const max = 128
	next := `{"type":"agent_start"}` + "\n"
	tests := []struct {
		name, in string
		want     []string
	}{
		// Case-variant and duplicate member names: encoding/json folds case
		// (and ſ→s, K→k), a parser differential (modelcontextprotocol/go-sdk#805,
		// golang/go#14750).
		{"upper-case ID is not the id", `{"type":"response","ID":"a","command":"abort","success":true}` + "\n", []string{"response: success=true"}},
		{"folded long s is not success", `{"type":"response","id":"a","command":"abort","ſuccess":true}` + "\n", []string{"response:a success=false"}},
		{"upper-case member of an event", `{"type":"agent_settled","Aborted":true}` + "\n", []string{"agent_settled aborted=false"}},
		{"upper-case type", `{"TYPE":"agent_start"}` + "\n", []string{"error:invalid"}},
		{"duplicate type", `{"type":"agent_settled","aborted":true,"type":"response"}` + "\n" + next, []string{"error:invalid", "agent_start"}},
		{"duplicate id", `{"type":"response","id":"a","id":"b","command":"abort","success":true}` + "\n", []string{"error:invalid"}},
		{"duplicate type, slow path", `{"x":1,"type":"agent_start","type":"response"}` + "\n", []string{"error:invalid"}},
		// Framing (reference §1.1; earendil-works/pi#1910: U+2028 is data).
		{"BOM before the record", "\ufeff" + `{"type":"agent_start"}` + "\n" + next, []string{"error:malformed", "agent_start"}},
		{"NUL after the record", `{"type":"agent_start"}` + "\x00\n" + next, []string{"error:malformed", "agent_start"}},
		{"raw NUL inside a string", "{\"type\":\"x\",\"s\":\"a\x00b\"}\n" + next, []string{"error:malformed", "agent_start"}},
		{"lone CR between members is whitespace", "{\"type\":\"agent_settled\",\r\"aborted\":true}\n", []string{"agent_settled aborted=true"}},
		{"CR CR LF strips one CR", `{"type":"agent_start"}` + "\r\r\n", []string{"agent_start"}},
		{"lone CR ends no record", `{"type":"agent_start"}` + "\r" + `{"type":"agent_start"}` + "\n", []string{"error:malformed"}},
		{"U+2028 and U+2029 in a member name", "{\"type\":\"future\",\"a\u2028b\u2029\":1}\n", []string{"future"}},
		{"numeric id", `{"type":"response","id":1,"command":"abort","success":true}` + "\n" + next, []string{"error:invalid", "agent_start"}},
		{"response without command", `{"type":"response","id":"a","success":true}` + "\n", []string{"response:a success=true"}},
		// JSON.stringify of a JS string cut inside a surrogate pair: U+FFFD,
		// never a protocol failure (ugorji/go#213).
		{"escaped lone surrogate in a known event", `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"\ud83d"}}` + "\n", []string{"message_update delta=\"\ufffd\""}},
		{"escaped lone surrogate in an unknown event", `{"type":"future","s":"\udc00"}` + "\n", []string{"future"}},
		{"huge number in an int field", `{"type":"tool_execution_end","toolCallId":"c","toolName":"bash","durationMs":1e400}` + "\n" + next, []string{"error:invalid", "agent_start"}},
		{"cap - 1", pad(max-1) + "\n", []string{"x"}},
		{"cap", pad(max) + "\n", []string{"x"}},
		{"cap with CR", pad(max) + "\r\n", []string{"x"}},
		{"cap + 1", pad(max+1) + "\n" + next, []string{"error:oversized", "agent_start"}},
		{"cap + 1 with CR", pad(max+1) + "\r\n" + next, []string{"error:oversized", "agent_start"}},
		{"cap + 1 unterminated", pad(max + 1), []string{"error:unterminated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := pirpc.NewDecoder(strings.NewReader(tt.in))
			d.MaxRecordSize = max
			var got []string
			for {
				rec, err := d.Next()
				if err == io.EOF {
					break
				}
				var pe *pirpc.ProtocolError
				switch {
				case errors.As(err, &pe):
					got = append(got, "error:"+kindName(pe.Kind))
					continue
				case err != nil:
					t.Fatal(err)
				}
				s := describe(rec)
				switch r := rec.(type) {
				case *pirpc.Response:
					s += fmt.Sprintf(" success=%v", r.Success)
				case *pirpc.MessageUpdate:
					s += fmt.Sprintf(" delta=%q", r.AssistantMessageEvent.Delta)
				case *pirpc.AgentSettled:
					s += fmt.Sprintf(" aborted=%v", r.Aborted)
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// Errors are what callers log: they carry no absolute path and no Pi text
// (security rules: never log paths or raw Pi records).
func TestErrors_NoPathsOrPiText(t *testing.T) {
	dir := t.TempDir()
	noShebang := filepath.Join(dir, "pi")
	if err := os.WriteFile(noShebang, []byte("\x00\x01not a program"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := pirpc.Start(testCtx(t), pirpc.Options{Executable: noShebang})
	if err == nil {
		t.Fatal("Start of a non-program succeeded")
	}
	if strings.Contains(err.Error(), dir) {
		t.Errorf("Start error names the absolute path: %v", err)
	}
	if !errors.Is(err, syscall.ENOEXEC) {
		t.Errorf("Start error %v does not match ENOEXEC", err)
	}
	ce := &pirpc.CommandError{Command: "prompt", ID: "p1", Message: "No API key found for fake at /home/u/.pi/agent/auth.json"}
	if s := ce.Error(); strings.Contains(s, "/home/u") || strings.Contains(s, "API key") {
		t.Errorf("CommandError.Error() = %q carries Pi's text", s)
	}
}

// Pi that closes its stdin but keeps writing: a call fails with ErrWrite
// (EPIPE, not a SIGPIPE death of this process), the events that follow
// are still delivered, and Close ends the process as usual.
func TestClient_PiClosedStdinButWrites(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := pirpc.Start(testCtx(t), pirpc.Options{
		Executable: writeScript(t, `exec 0<&-
echo '{"type":"agent_start"}'
read -r x < "$PIRPC_TEST_FIFO"
echo '{"type":"agent_settled","aborted":false}'
sleep 300
`),
		Env:               []string{"PIRPC_TEST_FIFO=" + fifo},
		TerminateDuration: 50 * time.Millisecond,
		KillDuration:      50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentStart); return ok }) // stdin is closed now
	if _, err := c.GetState(ctx); !errors.Is(err, pirpc.ErrWrite) {
		t.Fatalf("GetState = %v, want ErrWrite", err)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	pitest.Until(t, ctx, c, settled)
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
