package pirpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// pipeFake runs the fake Pi in this process on one end of net.Pipe and
// returns a Client on the other end and the fake's exit status channel.
func pipeFake(t *testing.T, scenario string) (*pirpc.Client, net.Conn, <-chan int) {
	t.Helper()
	ours, theirs := net.Pipe()
	code := make(chan int, 1)
	done := make(chan struct{})
	go func() { // owner: the test; ends when the client closes its end
		defer close(done)
		env := []string{fakepi.EnvScenario + "=" + scenario}
		code <- fakepi.Main(theirs, theirs, []string{"--mode", "rpc"}, env)
		theirs.Close()
	}()
	c := pirpc.NewClient(ours, nil)
	t.Cleanup(func() {
		c.Close(context.Background())
		<-done
	})
	return c, theirs, code
}

func TestNewClient_InProcessPeer(t *testing.T) {
	ctx := testCtx(t)
	c, _, code := pipeFake(t, "")
	if c.Pid() != 0 {
		t.Errorf("Pid = %d, want 0 without a process", c.Pid())
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SessionID != "fake-session-1" || st.Model == nil || st.Model.ID != "fake-pi" {
		t.Fatalf("state %+v", st)
	}
	res, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"})
	if err != nil || res.Disposition != "started" {
		t.Fatalf("Prompt = %+v, %v", res, err)
	}
	var text strings.Builder
	for _, ev := range pitest.Until(t, ctx, c, settled) {
		if u, ok := ev.(*pirpc.MessageUpdate); ok && u.AssistantMessageEvent.Type == "text_delta" {
			text.WriteString(u.AssistantMessageEvent.Delta)
		}
	}
	if got := text.String(); got != fakepi.DefaultReply {
		t.Errorf("streamed %q, want %q", got, fakepi.DefaultReply)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := <-code; got != 0 {
		t.Errorf("fake exit status %d, want 0 (it read the end of its input)", got)
	}
	if err := c.Err(); !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("Err = %v, want ErrExited", err)
	}
	if _, err := c.GetState(ctx); !errors.Is(err, pirpc.ErrClosed) {
		t.Errorf("GetState after Close = %v, want ErrClosed", err)
	}
}

func TestNewClient_PeerEndsTheStream(t *testing.T) {
	ctx := testCtx(t)
	c, theirs, _ := pipeFake(t, "reset-hang")
	if _, err := c.GetState(ctx); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() {
		_, err := c.NewSession(ctx, pirpc.NewSessionCommand{}) // never answered
		failed <- err
	}()
	time.AfterFunc(50*time.Millisecond, func() { theirs.Close() })
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after the peer closed the stream")
	}
	if err := <-failed; !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("pending call = %v, want ErrExited", err)
	}
	if err := c.Err(); !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("Err = %v, want ErrExited", err)
	}
}

func TestCommandTransport_CallerBuiltCommand(t *testing.T) {
	exe, env, err := fakepi.Command(fakepi.Config{Scenario: "ignore-eof"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--mode", "rpc")
	cmd.Env = append(os.Environ(), env...)
	// Negative TerminateDuration: SIGTERM right after stdin is closed; the
	// fake ignores EOF, so only the signal ends it, long before KillDuration.
	tr := &pirpc.CommandTransport{Command: cmd, TerminateDuration: -1, KillDuration: 20 * time.Second}
	rwc, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := pirpc.NewClient(rwc, nil)
	if c.Pid() != cmd.Process.Pid {
		t.Errorf("Pid = %d, want %d", c.Pid(), cmd.Process.Pid)
	}
	if _, err := c.GetState(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var ee *pirpc.ExitError
	if err := c.Err(); !errors.As(err, &ee) || !endedBy(ee, syscall.SIGTERM) || !ee.Closed {
		t.Errorf("Err = %v, want the end by SIGTERM after Close", err)
	}
	if _, err := tr.Connect(t.Context()); err == nil {
		t.Error("second Connect of a started command succeeded")
	}
}

func TestCommandTransport_RejectsWiredCommand(t *testing.T) {
	for name, cmd := range map[string]*exec.Cmd{
		"nil command":  nil,
		"own stdout":   {Path: "/bin/true", Stdout: os.Stdout},
		"own stdin":    {Path: "/bin/true", Stdin: strings.NewReader("")},
		"already done": func() *exec.Cmd { c := exec.Command("/bin/true"); c.Run(); return c }(),
	} {
		t.Run(name, func(t *testing.T) {
			if rwc, err := (&pirpc.CommandTransport{Command: cmd}).Connect(t.Context()); err == nil {
				rwc.Close()
				t.Fatal("Connect succeeded")
			}
		})
	}
}

// The framing kinds are internal/jsonl's: errors.Is matches either name,
// so callers of either package keep working.
func TestProtocolError_MatchesJSONLKinds(t *testing.T) {
	in := "\xff\n" + strings.Repeat("a", 20) + "\n" + `{"type":"x"`
	d := pirpc.NewDecoder(strings.NewReader(in))
	d.MaxRecordSize = 10
	for _, want := range []struct{ ours, theirs error }{
		{pirpc.ErrInvalidUTF8, jsonl.ErrInvalidUTF8},
		{pirpc.ErrOversized, jsonl.ErrOversized},
		{pirpc.ErrUnterminated, jsonl.ErrUnterminated},
	} {
		_, err := d.Next()
		var pe *pirpc.ProtocolError
		if !errors.As(err, &pe) || !errors.Is(err, want.ours) || !errors.Is(err, want.theirs) {
			t.Errorf("err = %v, want a ProtocolError matching %v and %v", err, want.ours, want.theirs)
		}
	}
}

// ExampleNewClient runs the fake Pi in this process on one end of
// net.Pipe: no subprocess.
func ExampleNewClient() {
	ours, theirs := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fakepi.Main(theirs, theirs, []string{"--mode", "rpc"}, nil)
		theirs.Close()
	}()
	c := pirpc.NewClient(ours, nil)
	st, err := c.GetState(context.Background())
	if err != nil {
		fmt.Println(err)
	}
	c.Close(context.Background())
	<-done
	fmt.Println(st.SessionID, st.Model.ID)
	// Output: fake-session-1 fake-pi
}
