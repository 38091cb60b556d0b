package broker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/broker"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/protocol")

// TestBroker_ProtocolTranscripts pins the broker's JSON-lines protocol
// (reference taskbar.md §8) with the golden transcripts
// testdata/protocol/*.txtar, each against a fresh broker over the fake Pi.
//
// An archive holds the file "wire" and optionally "fakepi" (the fake's
// scenario words). Lines of wire:
//
//	> LINE        the client sends LINE on the connection
//	< LINE        the broker's next line ("EOF" once it closed the connection)
//	! wait P=V; … poll state (another connection) until every path P of the
//	              snapshot (dotted, e.g. task.status) has the value V
//	! reconnect   close the connection and dial a new one
//	# text        a comment
//
// In sent lines {{identity}}, {{token}} and the placeholders of received
// ids are replaced by their values. Received lines are compared after
// normalization: the endpoint's identity and token, the snapshots' session
// and task ids ({{session_id}}, {{session_id_2}}, … in order of first
// appearance), timestamps ({{time}}) and seq ({{seq}}). With -update the
// received lines are rewritten.
func TestBroker_ProtocolTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "protocol", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wire []byte
	var scenario string
	for _, f := range ar.Files {
		switch f.Name {
		case "wire":
			wire = f.Data
		case "fakepi":
			scenario = strings.TrimSpace(string(f.Data))
		default:
			t.Fatalf("unknown file %q in %s", f.Name, file)
		}
	}
	ep := serveBroker(t, newProject(t), fakepi.Config{Scenario: scenario})
	n := newNormalizer(ep)
	tc := dialTranscript(t, ep)
	poll := dialTranscript(t, ep)
	poll.handshake(t, ep)

	var got bytes.Buffer
	for line := range strings.Lines(string(wire)) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "< "):
			continue // replaced by what the broker sends
		case strings.HasPrefix(line, "> "):
			fmt.Fprintln(&got, line)
			fmt.Fprintln(&got, "< "+n.normalize(tc.exchange(t, n.expand(line[2:]))))
		case line == "! reconnect":
			fmt.Fprintln(&got, line)
			tc.nc.Close()
			tc = dialTranscript(t, ep)
		case strings.HasPrefix(line, "! wait "):
			fmt.Fprintln(&got, line)
			poll.waitFor(t, strings.Split(line[len("! wait "):], "; "))
		case line == "" || strings.HasPrefix(line, "#"):
			fmt.Fprintln(&got, line)
		default:
			t.Fatalf("bad transcript line %q", line)
		}
	}
	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "wire" {
				ar.Files[i].Data = got.Bytes()
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(strings.Split(string(wire), "\n"), strings.Split(got.String(), "\n")); diff != "" {
		t.Errorf("%s differs; -update rewrites it (-want +got):\n%s", file, diff)
	}
}

// serveBroker runs a broker for p over the fake Pi until the test ends
// and returns its endpoint.
func serveBroker(t *testing.T, p project, cfg fakepi.Config) broker.Endpoint {
	t.Helper()
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- broker.Serve(ctx, &broker.ServerOptions{ProjectRoot: p.root, RuntimeBase: p.base, Grace: time.Hour,
			Runtime: rt.Options{Executable: os.Args[0], Args: []string{}, Env: cfg.Env(), StopWait: 200 * time.Millisecond}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	var ep broker.Endpoint
	waitUntil(t, "endpoint", func() bool { var ok bool; ep, ok = p.endpoint(t); return ok })
	return ep
}

// transcriptConn is one client connection of a transcript.
type transcriptConn struct {
	nc  net.Conn
	br  *bufio.Reader
	eof bool
}

func dialTranscript(t *testing.T, ep broker.Endpoint) *transcriptConn {
	t.Helper()
	nc, err := net.Dial("unix", ep.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &transcriptConn{nc: nc, br: bufio.NewReader(nc)}
}

// exchange sends line and returns the broker's next line, or "EOF".
func (c *transcriptConn) exchange(t *testing.T, line string) string {
	t.Helper()
	if c.eof {
		return "EOF"
	}
	c.nc.SetDeadline(time.Now().Add(30 * time.Second)) // only stops a broken run from hanging
	c.nc.Write([]byte(line + "\n"))                    // a refused connection may be closed already
	got, err := c.br.ReadString('\n')
	if errors.Is(err, io.EOF) && got == "" || platform.Code(err) == platform.ECONNRESET {
		c.eof = true
		return "EOF"
	}
	if err != nil {
		t.Fatalf("read after %s: %v", line, err)
	}
	return strings.TrimSuffix(got, "\n")
}

func (c *transcriptConn) handshake(t *testing.T, ep broker.Endpoint) {
	t.Helper()
	hs, _ := json.Marshal(broker.Handshake{Type: "handshake", Protocol: broker.ProtocolVersion, Identity: ep.Identity, Token: ep.Token})
	if got := c.exchange(t, string(hs)); got != string(hs) {
		t.Fatalf("handshake: %s", got)
	}
}

// waitFor polls state until every "path=value" condition holds.
func (c *transcriptConn) waitFor(t *testing.T, conds []string) {
	t.Helper()
	req := `{"type":"state","id":"ffffffffffffffffffffffff"}`
	holds := func(line string) bool {
		var resp struct {
			Snapshot map[string]any `json:"snapshot"`
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("state: %s", line)
		}
		for _, cond := range conds {
			path, want, ok := strings.Cut(cond, "=")
			if !ok {
				t.Fatalf("bad wait condition %q", cond)
			}
			var v any = resp.Snapshot
			for _, k := range strings.Split(path, ".") {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			if fmt.Sprint(v) != want {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(30 * time.Second) // only stops a broken run from hanging
	for {
		last := c.exchange(t, req)
		if holds(last) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; last state %s", strings.Join(conds, "; "), last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// normalizer replaces the run's random values by stable placeholders.
type normalizer struct {
	fixed  *strings.Replacer // identity and token
	values map[string]string // placeholder -> value, for sent lines
	names  map[string]string // value -> placeholder
	count  map[string]int    // per kind
}

func newNormalizer(ep broker.Endpoint) *normalizer {
	identity, _ := json.Marshal(ep.Identity)
	id := string(identity[1 : len(identity)-1])
	return &normalizer{
		fixed:  strings.NewReplacer(id, "{{identity}}", ep.Token, "{{token}}"),
		values: map[string]string{"{{identity}}": id, "{{token}}": ep.Token},
		names:  map[string]string{},
		count:  map[string]int{},
	}
}

var (
	reSessionID = regexp.MustCompile(`"session":\{"id":"([^"]+)"`)
	reTaskID    = regexp.MustCompile(`"task":\{"id":"([^"]+)"`)
	reTime      = regexp.MustCompile(`"(started_at|finished_at)":"[^"]*"`)
	reSeq       = regexp.MustCompile(`"seq":\d+`)
)

func (n *normalizer) normalize(line string) string {
	line = n.fixed.Replace(line)
	for kind, re := range map[string]*regexp.Regexp{"session_id": reSessionID, "task_id": reTaskID} {
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			n.name(kind, m[1])
		}
	}
	for v, name := range n.names {
		line = strings.ReplaceAll(line, `"`+v+`"`, `"`+name+`"`)
	}
	line = reTime.ReplaceAllString(line, `"$1":"{{time}}"`)
	return reSeq.ReplaceAllString(line, `"seq":{{seq}}`)
}

// name returns the placeholder of value, numbering new values of a kind.
func (n *normalizer) name(kind, value string) string {
	if name, ok := n.names[value]; ok {
		return name
	}
	n.count[kind]++
	name := "{{" + kind + "}}"
	if c := n.count[kind]; c > 1 {
		name = fmt.Sprintf("{{%s_%d}}", kind, c)
	}
	n.names[value], n.values[name] = name, value
	return name
}

// expand replaces placeholders in a line to send by their values.
func (n *normalizer) expand(line string) string {
	for name, v := range n.values {
		line = strings.ReplaceAll(line, name, v)
	}
	return line
}
