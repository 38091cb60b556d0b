package live

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
)

// crashPage is the page side of the crash test: it posts seqs 1..total,
// replays from its last acknowledged seq after any failure, and never
// lowers what it has seen acknowledged.
type crashPage struct {
	mu       sync.Mutex
	acked    int64
	total    int64
	url      func() string
	tok, sid string
	rng      *rand.Rand
	gate     *sync.RWMutex // held for reading around each request; the killer checks under the write lock
}

func crashEnvelope(sid string, seq int64) string {
	var typ, p string
	switch {
	case seq%10 == 0:
		typ, p = "checkpoint", checkpointPayload(fmt.Sprintf("cp-%d", seq/10), "send", "smart")
	case seq%45 == 3:
		typ, p = "answer", fmt.Sprintf(`{"unit_id":"u%d","text":"yes"}`, seq-1)
	case seq%13 == 0:
		typ, p = "unit_withdraw", fmt.Sprintf(`{"unit_id":"u%d"}`, seq-1)
	case seq%7 == 0:
		typ, p = "frame", fmt.Sprintf(`{"id":"f%d","t":1,"route":"/","kind":"gesture","jpeg_base64":"/9j/4AAQSkZJRgABAQ=="}`, seq)
	default:
		typ, p = "unit", unitPayload(fmt.Sprintf("u%d", seq))
	}
	return fmt.Sprintf(`{"schema_version":"live/1","session_id":%q,"seq":%d,"t":%d,"type":%q,"payload":%s}`, sid, seq, seq, typ, p)
}

func (p *crashPage) ackedSeq() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

func (p *crashPage) run(ctx context.Context, client *http.Client) {
	for p.ackedSeq() < p.total && ctx.Err() == nil {
		from := p.ackedSeq() + 1
		var envs []string
		n := int64(1 + p.rng.IntN(8))
		for s := from; s < from+n && s <= p.total; s++ {
			if s%7 == 0 && s%10 != 0 && s%13 != 0 && s%45 != 3 { // frames go alone
				if len(envs) == 0 {
					envs = append(envs, crashEnvelope(p.sid, s))
				}
				break
			}
			envs = append(envs, crashEnvelope(p.sid, s))
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", p.url()+"/events", strings.NewReader("["+strings.Join(envs, ",")+"]"))
		req.Header.Set("Authorization", "Bearer "+p.tok)
		req.Header.Set("X-Riffrec-Session", p.sid)
		p.gate.RLock()
		resp, err := client.Do(req)
		if err != nil {
			p.gate.RUnlock()
			time.Sleep(10 * time.Millisecond)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p.gate.RUnlock()
		var ack ackedBody
		if resp.StatusCode == 200 && json.Unmarshal(body, &ack) == nil {
			p.mu.Lock()
			p.acked = max(p.acked, ack.AckedSeq)
			p.mu.Unlock()
		}
		time.Sleep(time.Duration(p.rng.IntN(3)) * time.Millisecond)
	}
}

// crashAgent waits and acks; it fails the test if a batch it saw
// acknowledged is ever served again.
type crashAgent struct {
	mu        sync.Mutex
	acked     map[string]bool // ack answered 200
	attempted map[string]bool // ack sent (the answer may have been lost in a kill)
	served    map[string]int
	violation []string
	url       func() string
	tok       string
	rng       *rand.Rand
	gate      *sync.RWMutex
}

func (a *crashAgent) step(ctx context.Context, client *http.Client, ackAll bool) (idle bool) {
	a.gate.RLock()
	defer a.gate.RUnlock()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.url()+"/wait", nil)
	req.Header.Set("Authorization", "Bearer "+a.tok)
	resp, err := client.Do(req)
	if err != nil {
		time.Sleep(10 * time.Millisecond)
		return false
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 204 {
		return true
	}
	if resp.StatusCode != 200 {
		time.Sleep(10 * time.Millisecond)
		return false
	}
	var w WakeEnvelope
	if err := json.Unmarshal(body, &w); err != nil {
		a.mu.Lock()
		a.violation = append(a.violation, "bad wake envelope: "+string(body))
		a.mu.Unlock()
		return false
	}
	a.mu.Lock()
	if a.acked[w.CheckpointID] {
		a.violation = append(a.violation, "acknowledged batch served again: "+w.CheckpointID)
	}
	a.served[w.CheckpointID]++
	a.mu.Unlock()
	if !ackAll && a.rng.IntN(5) == 0 {
		return false // leave it unacknowledged: it must come back
	}
	a.mu.Lock()
	a.attempted[w.CheckpointID] = true
	a.mu.Unlock()
	req, _ = http.NewRequestWithContext(ctx, "POST", a.url()+"/checkpoints/"+w.CheckpointID+"/ack", nil)
	req.Header.Set("Authorization", "Bearer "+a.tok)
	resp, err = client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		a.mu.Lock()
		a.acked[w.CheckpointID] = true
		a.mu.Unlock()
	}
	return false
}

// diskCheck reads the state directory of a dead endpoint and checks the
// durability invariants against what the page and agent were told.
func diskCheck(t *testing.T, root string, pageAcked int64, agentAcked map[string]bool) {
	t.Helper()
	dir := filepath.Join(root, "state")
	for _, p := range []struct {
		path string
		mode os.FileMode
		dir  bool
	}{{dir, 0o700, true}, {filepath.Join(dir, "session.json"), 0o600, false}, {filepath.Join(dir, "board.json"), 0o600, false}} {
		fi, err := os.Stat(p.path)
		if err != nil || fi.Mode().Perm() != ostest.Perm(p.mode, p.dir) {
			t.Fatalf("%s: %v mode %v", filepath.Base(p.path), err, fi.Mode().Perm())
		}
	}
	var b board
	if err := readJSONFile(filepath.Join(dir, "board.json"), &b); err != nil {
		t.Fatalf("board.json: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "log/events.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	complete := bytes.HasSuffix(data, []byte("\n"))
	lines := 0
	for sc.Scan() {
		lines++
		var ll logLine
		if err := json.Unmarshal(sc.Bytes(), &ll); err != nil {
			if !complete && lines == bytes.Count(data, []byte("\n"))+1 {
				break // torn tail of an unacknowledged write
			}
			t.Fatalf("log line %d: %v", lines, err)
		}
		if ll.Seq != last+1 {
			t.Fatalf("log seq %d after %d", ll.Seq, last)
		}
		last = ll.Seq
	}
	if last < pageAcked {
		t.Fatalf("acknowledged envelope lost: log ends at %d, page saw %d acked", last, pageAcked)
	}
	if b.AckedSeq > last {
		t.Fatalf("board acked_seq %d ahead of log %d", b.AckedSeq, last)
	}
	// An ack is durable once journaled: board.json plus state/ops.ndjson.
	cur, err := (&store{root: root, dir: dir}).loadBoard()
	if err != nil {
		t.Fatalf("board with ops journal: %v", err)
	}
	for id := range agentAcked {
		if !slices.Contains(cur.AckedCheckpointIDs, id) {
			t.Fatalf("acknowledged batch %s not recorded in board.json or the ops journal", id)
		}
	}
}

// liveCheck compares a running endpoint's files with each other.
func liveCheck(t *testing.T, root string, agentAcked map[string]bool) {
	t.Helper()
	dir := filepath.Join(root, "state")
	var b board
	if err := readJSONFile(filepath.Join(dir, "board.json"), &b); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "batches"))
	var files, pending []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			files = append(files, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	for _, r := range b.Pending {
		pending = append(pending, escapeID(r.CheckpointID))
		if agentAcked[r.CheckpointID] {
			t.Fatalf("acknowledged batch %s pending after restart", r.CheckpointID)
		}
	}
	slices.Sort(files)
	slices.Sort(pending)
	if !slices.Equal(files, pending) {
		t.Fatalf("batch files %v != board pending %v", files, pending)
	}
}

// TestCrash_SIGKILL kills the endpoint process 50 times at random points
// during a burst of 1,000 envelopes and checks every invariant after each
// kill and restart. Under Wine, where starting a process is about ten
// times slower, it kills 15 times (the package's run stays within its
// timeout on a loaded CI machine).
func TestCrash_SIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test is long")
	}
	const total = 1000
	kills := 50
	if ostest.Wine() != "" {
		kills = 15
	}
	root := t.TempDir()
	env := []string{"CE_LIVE_WAIT_TIMEOUT_MS=300"}
	line := startServer(t, root, testOrigin, env...)
	t.Cleanup(func() {
		if s, err := ReadSession(root); err == nil && s.PID != 0 {
			killAndReap(s.PID, platform.Kill)
		}
	})
	sf, _ := ReadSession(root)
	gate := &sync.RWMutex{}
	var urlMu sync.Mutex
	base := line.URL
	url := func() string { urlMu.Lock(); defer urlMu.Unlock(); return base }
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	page := &crashPage{total: total, url: url, tok: line.PageToken, sid: "sess_crash", rng: rand.New(rand.NewPCG(seed, 1)), gate: gate}
	agent := &crashAgent{acked: map[string]bool{}, served: map[string]int{}, attempted: map[string]bool{}, url: url, tok: sf.AgentToken, rng: rand.New(rand.NewPCG(seed, 2)), gate: gate}
	client := &http.Client{Timeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); page.run(ctx, client) }()
	agentStop := make(chan struct{})
	go func() {
		defer wg.Done()
		for {
			select {
			case <-agentStop:
				return
			default:
			}
			agent.step(ctx, client, false)
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 3))
	lastKillAt := int64(0)
	for k := 0; k < kills; k++ {
		gap := int64(1 + rng.IntN(30))
		for page.ackedSeq() < lastKillAt+gap && page.ackedSeq() < total {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
		pid := serverPID(t, root)
		killAndReap(pid, platform.Kill)
		gate.Lock() // in-flight requests fail fast: the server is dead
		lastKillAt = page.ackedSeq()
		agent.mu.Lock()
		acked := copySet(agent.acked)
		agent.mu.Unlock()
		diskCheck(t, root, page.ackedSeq(), acked)
		l2 := startServer(t, root, "", env...)
		if l2.Status != "resumed" || l2.PageToken != line.PageToken {
			t.Fatalf("restart %d: %+v", k, l2)
		}
		urlMu.Lock()
		base = l2.URL
		urlMu.Unlock()
		liveCheck(t, root, acked)
		gate.Unlock()
	}
	for page.ackedSeq() < total {
		time.Sleep(5 * time.Millisecond)
	}
	close(agentStop)
	wg.Wait()
	// Drain: every batch ever created must reach the agent and be acked.
	for idle := 0; idle < 2; {
		if agent.step(ctx, client, true) {
			idle++
		} else {
			idle = 0
		}
	}
	cancel()
	killAndReap(serverPID(t, root), platform.Terminate)
	if len(agent.violation) > 0 {
		t.Fatalf("violations: %v", agent.violation)
	}
	diskCheck(t, root, total, agent.acked)
	// The board as committed: board.json is a checkpoint of the logs, and a
	// Terminate that could not be delivered gracefully (Windows without a
	// console to break) leaves the logs past it.
	b, _, err := (&store{root: root, dir: filepath.Join(root, stateDirName)}).readBoard()
	if err != nil {
		t.Fatal(err)
	}
	if b.AckedSeq != total || len(b.Pending) != 0 {
		t.Fatalf("final board: acked_seq %d pending %v", b.AckedSeq, b.Pending)
	}
	// Every batch ever created was acknowledged by the agent (none lost),
	// and every acknowledgement on record was sent by the agent.
	var created []string
	for _, c := range b.Checkpoints {
		created = append(created, c.ID)
	}
	slices.Sort(created)
	got := slices.Sorted(slices.Values(b.AckedCheckpointIDs))
	if !slices.Equal(created, got) {
		t.Fatalf("batches created %d, acked %d:\ncreated %v\nacked %v", len(created), len(got), created, got)
	}
	for _, id := range got {
		if !agent.attempted[id] {
			t.Fatalf("batch %s acked without an agent ack", id)
		}
	}
	if len(created) < 90 {
		t.Fatalf("only %d batches created", len(created))
	}
	t.Logf("%d kills, %d envelopes, %d batches, %d serves", kills, total, len(created), sum(agent.served))
}

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
