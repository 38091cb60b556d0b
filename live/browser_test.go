package live

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/platform"

	"github.com/chromedp/chromedp"
	"github.com/go-json-experiment/json"
)

// livePage is a minimal live page: it reads the handoff fragment, keeps
// token, endpoint, session id and seq in sessionStorage (so a reload keeps
// the session), posts envelopes with fetch and reads the SSE stream.
//
// The stream is read with fetch, as riffrec does: EventSource cannot send
// the Authorization header, and the endpoint reads its credential from that
// header only (seed 002, "Credentials").
const livePage = `<!doctype html><html><head><title>live</title></head><body><script>
const boot = (() => {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('riffrec_live')) {
    sessionStorage.setItem('boot', JSON.stringify({token: h.get('riffrec_live'), endpoint: h.get('endpoint')}));
    history.replaceState(null, '', location.pathname);
  }
  return JSON.parse(sessionStorage.getItem('boot'));
})();
let sid = sessionStorage.getItem('sid');
if (!sid) { sid = 'sess_' + Math.random().toString(36).slice(2, 10); sessionStorage.setItem('sid', sid); }
window.sid = sid;
window.events = [];
window.streams = 0;
function nextSeq() { const s = Number(sessionStorage.getItem('seq') || '0') + 1; sessionStorage.setItem('seq', String(s)); return s; }
window.send = async (items) => {
  const envs = items.map(([type, payload]) => ({schema_version: 'live/1', session_id: sid, seq: nextSeq(), t: Math.round(performance.now()), type, payload}));
  const r = await fetch(boot.endpoint + '/events', {method: 'POST', headers: {'Authorization': 'Bearer ' + boot.token, 'Content-Type': 'application/json', 'X-Riffrec-Session': sid}, body: JSON.stringify(envs)});
  return {status: r.status, body: await r.json()};
};
window.has = (name, f) => window.events.some(e => e.name === name && f(e.data));
(async function stream() {
  for (;;) {
    try {
      const r = await fetch(boot.endpoint + '/stream', {headers: {'Authorization': 'Bearer ' + boot.token, 'X-Riffrec-Session': sid}});
      window.streams++;
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i); buf = buf.slice(i + 2);
          let name = 'message', data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) name = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data) window.events.push({name, data: JSON.parse(data)});
        }
      }
    } catch (e) { window.lastErr = String(e); }
    await new Promise(r => setTimeout(r, 100));
  }
})();
</script></body></html>`

// agentWait long-polls GET /wait as the agent does (the wait verb itself
// lives in cmd/pikit) until a batch arrives, and decodes it.
func agentWait(t *testing.T, root string) *WakeEnvelope {
	t.Helper()
	sess, err := ReadSession(root)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", sess.URL+"/wait", nil)
		req.Header.Set("Authorization", "Bearer "+sess.AgentToken)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNoContent {
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("wait: %d %s", resp.StatusCode, out)
		}
		var w WakeEnvelope
		if err := json.Unmarshal(out, &w); err != nil {
			t.Fatalf("wait output: %v: %s", err, out)
		}
		return &w
	}
	t.Fatal("wait: no batch within 30 s")
	return nil
}

func agentPost(t *testing.T, url, tok, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestBrowser_LivePage(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	// The browser starts first so a missing chromium ends the test (fatal
	// under CI=true) before any server is started.
	browser := browsertest.New(t, &browsertest.Options{Timeout: 5 * time.Minute})

	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, livePage)
	}))
	defer app.Close()
	root := t.TempDir()
	// The grace window bounds both the loss watch (cleared when a stream is
	// still up at its end) and a reconnect: it must outlast the time from
	// the applied post to the closed tab, and a reconnect, on a busy machine.
	line := startServer(t, root, app.URL, "CE_LIVE_PAGE_LOST_GRACE_MS=4000", "CE_LIVE_WAIT_TIMEOUT_MS=2000")
	defer func() { killAndReap(serverPID(t, root), platform.Terminate) }()
	sf, _ := ReadSession(root)
	agentTok := sf.AgentToken
	endpoint := line.URL // http://localhost:<port>: a different origin from the app (127.0.0.1)

	tab, closeTab := chromedp.NewContext(browsertest.Chromedp(t, browser))
	defer closeTab()
	if err := chromedp.Do(tab); err != nil { // the tab lives as long as this first call's context
		t.Fatal(err)
	}
	run := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	eval := func(js string, out any) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		raw, err := browsertest.RunFresh(ctx, func() ([]byte, error) {
			return chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	send := func(items string) {
		t.Helper()
		var res struct {
			Status int            `json:"status"`
			Body   map[string]any `json:"body"`
		}
		eval("send("+items+")", &res)
		if res.Status != 200 {
			t.Fatalf("post %s: %d %v", items, res.Status, res.Body)
		}
	}
	waitFor := func(cond string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		_, err := browsertest.RunFresh(ctx, func() (bool, error) {
			return chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(10*time.Second)))
		})
		if err != nil {
			dctx, dcancel := context.WithTimeout(tab, 5*time.Second)
			defer dcancel()
			dbg, derr := chromedp.Run(dctx, chromedp.Evaluate[[]byte](`JSON.stringify({events: window.events, streams: window.streams, err: window.lastErr, href: location.href})`))
			t.Logf("page: %s %v", dbg, derr)
			t.Fatalf("waiting for %s: %v", cond, err)
		}
	}
	unit := func(id string) string { return `["unit",` + unitPayload(id) + `]` }
	cp := func(id, trig, mode string) string { return `["checkpoint",` + checkpointPayload(id, trig, mode) + `]` }

	run(chromedp.Navigate(app.URL + "/#riffrec_live=" + line.PageToken + "&endpoint=" + endpoint))
	waitFor(`window.streams > 0 && has('ack', d => true)`)
	var sid string
	eval(`window.sid`, &sid)

	// A unit released by a send checkpoint reaches wait; the page saw the
	// triaging release marker on the stream.
	send(fmt.Sprintf(`[%s, %s]`, unit("u1"), cp("cp1", "send", "smart")))
	w := agentWait(t, root)
	if w.CheckpointID != "cp1" || w.Kind != "send" || len(w.Units) != 1 || w.Units[0].ID != "u1" || w.Units[0].Status != "triaging" {
		t.Fatalf("send batch: %+v", w)
	}
	waitFor(`has('unit_status', d => d.unit_id === 'u1' && d.status === 'triaging')`)
	if c := agentPost(t, endpoint, agentTok, "/checkpoints/cp1/ack", ""); c != 200 {
		t.Fatalf("ack %d", c)
	}

	// Instant mode: a unit wakes the agent at once.
	send(`[["mode", {"mode":"instant"}]]`)
	send(`[` + unit("u2") + `]`)
	w = agentWait(t, root)
	if w.CheckpointID != "instant-u2" || w.Kind != "instant" {
		t.Fatalf("instant batch: %+v", w)
	}
	agentPost(t, endpoint, agentTok, "/checkpoints/instant-u2/ack", "")

	// Withdrawal after release arrives with status withdrawn.
	send(`[["mode", {"mode":"smart"}], ["unit_withdraw", {"unit_id":"u1","reason":"changed my mind"}], ` + cp("cp2", "send", "smart") + `]`)
	w = agentWait(t, root)
	if w.CheckpointID != "cp2" || len(w.Units) != 1 || w.Units[0].ID != "u1" || w.Units[0].Status != "withdrawn" {
		t.Fatalf("withdrawal batch: %+v", w)
	}
	waitFor(`has('unit_status', d => d.unit_id === 'u1' && d.status === 'withdrawn')`)
	agentPost(t, endpoint, agentTok, "/checkpoints/cp2/ack", "")

	// A reload keeps the session: same id, seq continues, no 409.
	run(chromedp.Reload())
	waitFor(`window.streams > 0 && has('ack', d => d.acked_seq >= 7)`)
	var sid2 string
	eval(`window.sid`, &sid2)
	if sid2 != sid {
		t.Fatalf("reload changed session %s -> %s", sid, sid2)
	}
	send(`[["mic", {"state":"granted"}]]`)
	waitFor(`has('unit_status', d => d.unit_id === 'u2' && d.status === 'triaging')`) // connect replay

	// Closed tab: the agent applied a unit, then the tab goes away and does
	// not come back within the grace window.
	if c := agentPost(t, endpoint, agentTok, "/units/u2/status", `{"status":"applied"}`); c != 200 {
		t.Fatalf("applied %d", c)
	}
	waitFor(`has('applied', d => d.unit_ids[0] === 'u2')`)
	closeTab()
	w = agentWait(t, root)
	if w.SessionStatus != "page_lost" || len(w.Units) != 0 || !strings.HasPrefix(w.CheckpointID, "page-lost-") || string(w.LostAfterCheckpointID) != `"cp2"` {
		t.Fatalf("page-lost batch: %+v", w)
	}
	if c := agentPost(t, endpoint, agentTok, "/checkpoints/"+w.CheckpointID+"/ack", ""); c != 200 {
		t.Fatalf("ack page-lost %d", c)
	}
	rep, err := ReadStatus(root, true)
	if err != nil || rep.Board.Page.Stream != "lost" || rep.Board.Page.LostEpisodes != 1 {
		t.Fatalf("status: %+v %v", rep.Board.Page, err)
	}
}
