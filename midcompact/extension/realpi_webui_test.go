package extension_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/workbench"
	"github.com/pikit-dev/pikit/pirpc"
)

// readyURL is the workbench URL in the review-webui ready notice.
var readyURL = regexp.MustCompile(`^Midcompact review webui ready: (http://127\.0\.0\.1:\d+/\?view=review&k=[0-9a-f]{64}) \(token [0-9a-f]{6}\)$`)

// Seed 001 §Concurrency, §External contracts (reference §5.6) on the real
// Pi with the production extension (`pikit ext install midcompact`): the
// review-webui notice carries the URL; the one-time k trades for the cookie;
// the page's state route shows the agent's range; a summary edit through the
// page's route reaches the plan as a draft entry; close-webui (confirmed)
// closes the server and frees the lock, so the model plans again.
func TestRealPi_WebWorkbenchEditAndClose(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser, secondUser)

	m := openWorkbench(t, ctx, s, "/midcompact:review-webui", readyURL)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	page := get(t, ctx, hc, m[1])
	if page.Request.URL.RawQuery != "view=review" || !strings.Contains(page.body, `<script id="state" type="application/json">`) {
		t.Fatalf("after the k exchange: %s %q", page.Request.URL, page.body[:min(len(page.body), 200)])
	}
	base := strings.TrimSuffix(m[1][:strings.Index(m[1], "?")], "/")
	live := liveness(t, ctx, hc, base+"/api/liveness")

	var st midcompact.ReviewState
	if err := json.Unmarshal([]byte(get(t, ctx, hc, base+"/api/state").body), &st); err != nil {
		t.Fatal(err)
	}
	if st.View != workbench.ViewReview || len(st.Draft.Ranges) != 1 || st.Draft.Ranges[0].Summary != "SUMMARY-ONE of the first exchange" {
		t.Fatalf("state = %+v", st.Draft)
	}
	id := st.Draft.Ranges[0].ID
	const edited = "EDITED in the workbench"
	post(t, ctx, hc, base+"/api/range/"+id+"/edit-summary", `{"value":"  `+edited+`  "}`)
	es, _ := s.entries(t, ctx)
	drafts := customOf(es, midcompact.DraftEntryType)
	last := drafts[len(drafts)-1]["data"].(map[string]any)["ranges"].([]any)
	if got := last[0].(map[string]any)["summary"]; got != edited {
		t.Errorf("draft entry summary %q, want %q", got, edited)
	}

	s.closeWebUI(t, ctx)
	select { // the close ends the page's liveness stream
	case <-live:
	case <-ctx.Done():
		t.Fatal("the liveness stream outlived close-webui")
	}
	if res, err := hc.Get(base + "/api/state"); err == nil {
		res.Body.Close()
		t.Errorf("after close-webui the workbench still answers: %s", res.Status)
	}
	evs := s.prompt(t, ctx, "PLAN again please")
	if texts := toolTexts(evs); len(texts) != 1 || !strings.Contains(texts[0], "added d2") {
		t.Errorf("plan call after close-webui = %q", texts)
	}
}

// openWorkbench runs a webui command and returns re's submatches of its
// ready notice.
func openWorkbench(t *testing.T, ctx context.Context, s *session, command string, re *regexp.Regexp) []string {
	t.Helper()
	n := notices(s.command(t, ctx, command, "", " webui ready: "))
	m := re.FindStringSubmatch(n[len(n)-1])
	if m == nil {
		t.Fatalf("ready notice = %q", n[len(n)-1])
	}
	return m
}

// post sends a JSON body to a workbench route and fails unless it answers
// 200.
func post(t *testing.T, ctx context.Context, hc *http.Client, url, body string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", req.URL.Path, res.Status)
	}
}

type page struct {
	*http.Response
	body string
}

func get(t *testing.T, ctx context.Context, hc *http.Client, url string) page {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(res.Body).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", res.Request.URL.Path, res.Status, b.String())
	}
	return page{res, b.String()}
}

// liveness opens the page's liveness stream, checks its first comment, and
// reports when the stream ended (nil: a clean EOF).
func liveness(t *testing.T, ctx context.Context, hc *http.Client, url string) <-chan error {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(res.Body)
	if line, err := r.ReadString('\n'); err != nil || line != ": connected\n" {
		res.Body.Close()
		t.Fatalf("liveness: %q %v", line, err)
	}
	done := make(chan error, 1)
	go func() {
		defer res.Body.Close()
		for {
			if _, err := r.ReadString('\n'); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				done <- err
				return
			}
		}
	}()
	return done
}

// startMidcompact starts Pi in env, sends prompts, then runs
// /midcompact:start (Agent direct) until the agent has settled.
func startMidcompact(t *testing.T, env *pitest.Env, prompts ...string) (*session, context.Context) {
	t.Helper()
	s := startPi(t, env)
	ctx := testCtx(t)
	for _, p := range prompts {
		s.prompt(t, ctx, p)
	}
	s.command(t, ctx, "/midcompact:start", "Agent direct", "Midcompact started at anchor")
	s.until(t, ctx, settled)
	return s, ctx
}

// closeWebUI runs /midcompact:close-webui, confirms the reference's
// "Close midcompact WebUI?" and waits for its closed notice.
func (s *session) closeWebUI(t *testing.T, ctx context.Context) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := s.c.Prompt(ctx, pirpc.PromptCommand{Message: "/midcompact:close-webui"})
		errc <- err
	}()
	s.until(t, ctx, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if ok && r.Method == "confirm" {
			if r.Title != "Close midcompact WebUI?" {
				t.Errorf("confirm title %q", r.Title)
			}
			yes := true
			if err := s.c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Confirmed: &yes}); err != nil {
				t.Fatal(err)
			}
		}
		return ok && r.Method == "notify" && r.Message == "Midcompact WebUI closed. The saved plan and transaction are unchanged."
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// Seed 001 §Persistence, §Concurrency (reference §5.6) on the real Pi: the
// selection workbench saves a selection as one draft entry, and saving the
// same selection again appends nothing; when the browser leaves (chromium's
// tab with the page closes, its liveness stream ends and none comes back
// within the grace) the workbench closes itself, Pi shows the closed
// notice and the lock is free again.
func TestRealPi_WorkbenchSameSelectionAndBrowserLeaving(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser, secondUser)
	m := openWorkbench(t, ctx, s, "/midcompact:select-webui", regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?view=selection&k=[0-9a-f]{64}`))
	tab := browsertest.NewTab(t, browsertest.New(t, nil))
	browsertest.Navigate(t, tab, m[0])
	browsertest.Wait(t, tab, "page live", `document.body.dataset.ready === "true" && document.body.dataset.live === "open"`, 30*time.Second)

	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	get(t, ctx, hc, m[0])
	drafts := func() int {
		es, _ := s.entries(t, ctx)
		return len(customOf(es, midcompact.DraftEntryType))
	}
	before := drafts()
	for range 2 {
		post(t, ctx, hc, m[1]+"/api/selection", `{"spans":[{"startRef":"a0004","endRef":"a0005"}],"keepRefs":[]}`)
	}
	if got := drafts(); got != before+1 {
		t.Errorf("draft entries %d → %d after saving the same selection twice, want one more", before, got)
	}

	browsertest.CloseTab(t, tab) // the browser leaves
	s.until(t, ctx, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		return ok && r.Method == "notify" && r.Message == "Selection closed. The plan is saved; tell the Agent to continue when ready."
	})
	evs := s.command(t, ctx, "/midcompact:status", "", "Mode: ")
	if n := notices(evs); !strings.HasSuffix(n[len(n)-1], "lock: free") {
		t.Errorf("status after the browser left = %q", n[len(n)-1])
	}
}
