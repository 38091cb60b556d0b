package midcompact

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact/internal/sessiontest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

const testHeader = sessiontest.Header

// readSession parses a session file made of the header and entry lines.
func readSession(t testing.TB, entries ...string) *pisession.File {
	t.Helper()
	return sessiontest.Read(t, entries...)
}

// branchOf is the root→leaf path of f ("" = last entry).
func branchOf(t testing.TB, f *pisession.File, leaf string) []pisession.Entry {
	t.Helper()
	return sessiontest.Branch(t, f, leaf)
}

// oracle is one Node process answering testdata/node/oracle.mjs requests.
type oracle struct {
	in  io.WriteCloser
	out *bufio.Reader
}

// newOracle starts the Node oracle of the test deps; it is stopped when the
// test ends.
func newOracle(t testing.TB) *oracle {
	t.Helper()
	inst := pitest.Require(t)
	sm := filepath.Join(inst.Root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "session-manager.js")
	cmd := exec.Command(filepath.Join(inst.NodeBin, "node"), filepath.Join("testdata", "node", "oracle.mjs"), sm)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node oracle: %v", err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("node oracle: %v", err)
		}
	})
	return &oracle{in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (o *oracle) ask(t *testing.T, req any, resp any) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write oracle: %v", err)
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("read oracle: %v", err)
	}
	var e struct{ Error string }
	if json.Unmarshal(line, &e) == nil && e.Error != "" {
		t.Fatalf("oracle: %s", e.Error)
	}
	if err := json.Unmarshal(line, resp); err != nil {
		t.Fatalf("decode oracle %q: %v", line, err)
	}
}

// tryKey asks for a key, returning Node's error text instead of failing.
func (o *oracle) tryKey(raw json.RawMessage) (key, nodeErr string) {
	b, err := json.Marshal(map[string]any{"op": "key", "message": raw})
	if err != nil {
		return "", err.Error()
	}
	if _, err := o.in.Write(append(b, '\n')); err != nil {
		return "", err.Error()
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		return "", err.Error()
	}
	var r struct{ Key, Error string }
	if err := json.Unmarshal(line, &r); err != nil {
		return "", err.Error()
	}
	return r.Key, r.Error
}

func (o *oracle) key(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var r struct{ Key string }
	o.ask(t, map[string]any{"op": "key", "message": raw}, &r)
	return r.Key
}

// recording reads a file of ../shared/reference/pi-recordings.
func recording(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pitest.SharedDir(t), "reference", "pi-recordings", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordedResponses returns the data of every recorded RPC response to cmd.
func recordedResponses(t *testing.T, name, cmd string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, line := range bytes.Split(recording(t, name), []byte("\n")) {
		var r struct {
			Rec struct {
				Type    string
				Command string
				Data    json.RawMessage
			}
		}
		if json.Unmarshal(line, &r) == nil && r.Rec.Type == "response" && r.Rec.Command == cmd {
			out = append(out, r.Rec.Data)
		}
	}
	return out
}
