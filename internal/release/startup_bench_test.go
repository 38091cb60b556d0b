package release_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
)

// BenchmarkRealPi_StartupPhases: where Pi's time to its first model request
// goes, with the StateFlow and midcompact packages installed from the local
// registry ("npm") and by `pikit ext install` ("ext"), against Pi with no
// extension ("none") and with a no-op TypeScript Pi package installed from
// the same registry ("noop", the in-run baseline of an extension). Each
// variant has its own temp folder (jiti's transpile cache lives there), so
// its first start after the install is cold; that one start is reported
// apart (V-cold-ms), then every iteration starts each variant once, warm.
// Per variant V, averaged over the warm starts (ms from process start):
//   - V-import-ms, V-factory-ms: Pi's module import and factory time of the
//     installed extensions (PI_TIMING; the built-in ones excluded);
//   - V-sidecar-ms: when the first sidecar was spawned (0 for none, noop);
//   - V-accepted-ms: the prompt's RPC response (after session_start and
//     before_agent_start);
//   - V-first-ms: the first model request;
//
// and npm-delta-ms, noop-delta-ms (V-first-ms - none-first-ms) and
// npm/noop (npm-delta over noop-delta).
func BenchmarkRealPi_StartupPhases(b *testing.B) {
	reg := benchRegistry(b)

	var mu sync.Mutex
	var first time.Time
	script := func(r *modelserver.Request) modelserver.Script {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		mu.Unlock()
		return modelserver.Script{Text: []string{"ok"}}
	}
	type variant struct {
		name string
		p    *piNPM
		sum  phases
	}
	var vs []*variant
	for _, name := range []string{"none", "noop", "npm", "ext"} {
		p := newPiNPM(b, reg, script)
		p.env.Env = append(p.env.Env, "TMPDIR="+b.TempDir())
		installVariant(b, p, name)
		vs = append(vs, &variant{name: name, p: p})
	}
	start := func(v *variant) phases {
		mu.Lock()
		first = time.Time{}
		mu.Unlock()
		ph := startPhases(b, v.p)
		mu.Lock()
		if first.IsZero() {
			b.Fatalf("%s: no model request", v.name)
		}
		ph.first = first.Sub(ph.start)
		mu.Unlock()
		return ph
	}
	cold := make([]time.Duration, len(vs))
	for i, v := range vs {
		cold[i] = start(v).first
	}
	n := 0
	for b.Loop() {
		for _, v := range vs {
			v.sum.add(start(v))
		}
		n++
	}
	for i, v := range vs {
		b.ReportMetric(ms(cold[i]), v.name+"-cold-ms") // after b.Loop, which resets what was reported
		b.ReportMetric(ms(v.sum.imports)/float64(n), v.name+"-import-ms")
		b.ReportMetric(ms(v.sum.factory)/float64(n), v.name+"-factory-ms")
		b.ReportMetric(ms(v.sum.sidecar)/float64(n), v.name+"-sidecar-ms")
		b.ReportMetric(ms(v.sum.accepted)/float64(n), v.name+"-accepted-ms")
		b.ReportMetric(ms(v.sum.first)/float64(n), v.name+"-first-ms")
	}
	none, noop, npm := vs[0].sum.first, vs[1].sum.first, vs[2].sum.first
	b.ReportMetric(ms(npm-none)/float64(n), "npm-delta-ms")
	b.ReportMetric(ms(noop-none)/float64(n), "noop-delta-ms")
	b.ReportMetric(float64(npm-none)/float64(max(noop-none, time.Millisecond)), "npm/noop")
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// phases of one Pi start (durations from the process start).
type phases struct {
	start                    time.Time
	imports, factory         time.Duration // sums over the installed extensions
	sidecar, accepted, first time.Duration
}

func (p *phases) add(q phases) {
	p.imports += q.imports
	p.factory += q.factory
	p.sidecar += q.sidecar
	p.accepted += q.accepted
	p.first += q.first
}

// piTiming is a line of PI_TIMING's extension group: "  PATH module
// import: 12ms" or "  PATH factory: 3ms".
var piTiming = regexp.MustCompile(`^\s+(\S+) (module import|factory): (\d+)ms$`)

// sidecarStarted is the bridge log's line of a sidecar spawn.
var sidecarStarted = regexp.MustCompile(`^\[piext \S+ bridge \d+ (\S+)\] started sidecar`)

// startPhases starts Pi in RPC mode with PI_TIMING=1, sends a prompt at
// once, reads stdout up to agent_settled, ends Pi (stdin closed) and
// returns the phases it can tell from stdout, stderr and the bridge logs
// (the first model request is the caller's).
func startPhases(t testing.TB, p *piNPM) phases {
	t.Helper()
	logs := filepath.Join(p.env.AgentDir, "tmp", "pikit-piext")
	os.RemoveAll(logs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.env.Executable, append([]string{"--mode", "rpc"}, p.env.Args...)...)
	cmd.Dir = p.env.Dir
	cmd.Env = append(append(os.Environ(), p.env.Env...), "PI_TIMING=1")
	cmd.WaitDelay = 10 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ph := phases{start: time.Now()}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"type":"prompt","message":"hello"}`)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		}
		_ = json.Unmarshal(sc.Bytes(), &ev)
		if ev.Type == "response" && ev.Command == "prompt" && ph.accepted == 0 {
			ph.accepted = time.Since(ph.start)
		}
		if ev.Type == "agent_settled" {
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pi: %v\n%s", err, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		m := piTiming.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(m[1], "builtin:") {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		if m[2] == "factory" {
			ph.factory += time.Duration(n) * time.Millisecond
		} else {
			ph.imports += time.Duration(n) * time.Millisecond
		}
	}
	ents, _ := os.ReadDir(logs)
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(logs, e.Name()))
		for _, l := range strings.Split(string(data), "\n") {
			if m := sidecarStarted.FindStringSubmatch(l); m != nil {
				if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
					if d := at.Sub(ph.start); ph.sidecar == 0 || d < ph.sidecar {
						ph.sidecar = d
					}
				}
			}
		}
	}
	return ph
}
