package workbench_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/workbench"
)

// bench is one open workbench under test.
type bench struct {
	m      *workbench.Manager
	plan   *testPlan
	notice string
	url    string // with k
	base   string // http://127.0.0.1:port
	client *http.Client
}

var noticeRE = regexp.MustCompile(`^Midcompact (review|selection) webui ready: (http://127\.0\.0\.1:\d+)/\?view=(review|selection)&k=([0-9a-f]{64}) \(token ([0-9a-f]{6})\)$`)

func openBench(t *testing.T, view string, opts *workbench.Options) *bench {
	t.Helper()
	if opts == nil {
		opts = &workbench.Options{}
	}
	if opts.FirstStream == 0 {
		opts.FirstStream = time.Minute
	}
	m := workbench.NewManager(opts)
	p := newTestPlan(t)
	notice, err := m.Open(t.Context(), view, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.CloseAll(context.Background()); err != nil {
			t.Error(err)
		}
	})
	g := noticeRE.FindStringSubmatch(notice)
	if g == nil || g[1] != view || g[3] != view || g[5] != g[4][:6] {
		t.Fatalf("notice %q", notice)
	}
	jar, _ := cookiejar.New(nil)
	b := &bench{m: m, plan: p, notice: notice, url: strings.TrimPrefix(notice[strings.Index(notice, "http://"):], ""), base: g[2],
		client: &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	b.url = b.url[:strings.Index(b.url, " (token")]
	t.Cleanup(b.client.CloseIdleConnections)
	return b
}

// login does the k exchange with the bench's client.
func (b *bench) login(t *testing.T) {
	t.Helper()
	res := b.do(t, "GET", b.url, "", nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("exchange: %d", res.StatusCode)
	}
}

type reply struct {
	StatusCode int
	Header     http.Header
	Body       string
}

func (b *bench) do(t *testing.T, method, u, body string, hdr map[string]string) reply {
	t.Helper()
	if strings.HasPrefix(u, "/") {
		u = b.base + u
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(data)}
}

func wantError(t *testing.T, r reply, status int, text string) {
	t.Helper()
	var body map[string]string
	if r.StatusCode != status || json.Unmarshal([]byte(r.Body), &body) != nil || body["error"] != text || len(body) != 1 {
		t.Errorf("got %d %s, want %d {error:%q}", r.StatusCode, r.Body, status, text)
	}
}

func decodeState(t *testing.T, r reply) *midcompact.ReviewState {
	t.Helper()
	if r.StatusCode != 200 {
		t.Fatalf("status %d: %s", r.StatusCode, r.Body)
	}
	var st midcompact.ReviewState
	if err := json.Unmarshal([]byte(r.Body), &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

const msgNoAccess = "Open the workbench with the URL Pi printed. If it was closed, run /midcompact:review-webui or /midcompact:select-webui again."
const msgClosed = "The midcompact workbench is closed. Open a new one with /midcompact:review-webui or /midcompact:select-webui."

// freshGet is a GET from a client with no cookie jar and no redirects
// followed (another browser, a private window, curl).
func freshGet(t *testing.T, u string) (reply, error) {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer c.CloseIdleConnections()
	res, err := c.Get(u)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(data)}, nil
}

// Beyond upstream: the URL's k is traded once for an HttpOnly SameSite=Strict
// cookie, with a redirect to the URL without k.
func TestAccess_KeyExchange(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	res := b.do(t, "GET", b.url, "", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/?view=review" {
		t.Fatalf("exchange: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	sc := res.Header.Get("Set-Cookie")
	if !regexp.MustCompile(`^midcompact_wb_\d+=[0-9a-f]{64}; Path=/; HttpOnly; SameSite=Strict$`).MatchString(sc) {
		t.Errorf("Set-Cookie %q", sc)
	}
	if r := b.do(t, "GET", "/?view=review", "", nil); r.StatusCode != 200 || !strings.Contains(r.Body, `<script id="state" type="application/json">{"view":"review"`) {
		t.Errorf("page with cookie: %d", r.StatusCode)
	}
	// The same k again, from the same browser: the same cookie again.
	if r := b.do(t, "GET", b.url, "", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Set-Cookie") != sc {
		t.Errorf("k again with cookie: %d %q", r.StatusCode, r.Header.Get("Set-Cookie"))
	}
	// A wrong or missing k from a browser without the cookie is refused,
	// with a text that says what to do.
	// The last hex digit of k, changed (never to itself: a fixed "0" was the
	// same k one time in sixteen).
	last := "0"
	if strings.HasSuffix(b.url, "0") {
		last = "1"
	}
	for _, u := range []string{strings.Replace(b.url, "k=", "k=0", 1), b.url[:len(b.url)-1] + last, b.base + "/?view=review&k=", b.base + "/?view=review"} {
		r, err := freshGet(t, u)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, r, 403, msgNoAccess)
	}
}

// The printed URL stays valid for the workbench's whole life: reopening it
// from a fresh cookie jar (another browser, a private window, curl without
// a jar), any number of times, gets the cookie, the redirect and the page.
func TestAccess_ReopenPrintedURL(t *testing.T) {
	b := openBench(t, workbench.ViewSelection, nil)
	b.login(t)
	for i := range 3 {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
		res, err := c.Get(b.url) // follows the 303 with the cookie
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.Request.URL.RawQuery != "view=selection" || !strings.Contains(string(data), `<script id="state" type="application/json">{"view":"selection"`) {
			t.Errorf("reopen %d: %d %q", i, res.StatusCode, res.Request.URL)
		}
		st, err := c.Get(b.base + "/api/state")
		if err != nil {
			t.Fatal(err)
		}
		st.Body.Close()
		if st.StatusCode != 200 {
			t.Errorf("reopen %d: /api/state %d", i, st.StatusCode)
		}
		c.CloseIdleConnections()
		r, err := freshGet(t, b.url)
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/?view=selection" || !strings.HasPrefix(r.Header.Get("Set-Cookie"), "midcompact_wb_") {
			t.Errorf("reopen %d without following: %d %q %q", i, r.StatusCode, r.Header.Get("Location"), r.Header.Get("Set-Cookie"))
		}
	}
	if !b.m.Registered() {
		t.Error("reopening closed the workbench")
	}
}

// Every route needs the session cookie; a wrong one is refused too.
func TestAccess_EveryRouteNeedsCookie(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	b.login(t)
	u, _ := url.Parse(b.base)
	good := b.client.Jar.Cookies(u)
	if len(good) != 1 {
		t.Fatalf("cookies %v", good)
	}
	routes := []struct{ method, path, body string }{
		{"GET", "/", ""}, {"GET", "/?view=review", ""}, {"GET", "/assets/page.js", ""}, {"GET", "/assets/page.css", ""},
		{"GET", "/api/state", ""}, {"GET", "/api/atom/a0001", ""}, {"GET", "/api/liveness", ""},
		{"POST", "/api/close", ""}, {"POST", "/api/selection", `{"spans":[],"keepRefs":[]}`},
		{"POST", "/api/range/d1/edit-summary", `{"value":"x"}`}, {"POST", "/api/range/d1/edit-topic", `{"value":"x"}`},
		{"POST", "/api/range/d1/remove", ""}, {"GET", "/nope", ""},
	}
	for _, cookie := range []string{"", good[0].Name + "=" + strings.Repeat("0", 64), good[0].Name + "=" + good[0].Value + "x"} {
		c := &http.Client{}
		for _, rt := range routes {
			req, _ := http.NewRequest(rt.method, b.base+rt.path, strings.NewReader(rt.body))
			if cookie != "" {
				req.Header.Set("Cookie", cookie)
			}
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(res.Body)
			res.Body.Close()
			wantError(t, reply{res.StatusCode, res.Header, string(data)}, 403, msgNoAccess)
		}
		c.CloseIdleConnections()
	}
	if _, saves, _, _ := b.plan.snapshot(); saves != 0 {
		t.Errorf("refused requests saved %d drafts", saves)
	}
}

// The Host header is checked on every request (DNS rebinding), before the
// key exchange too.
func TestAccess_HostGuard(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	wantError(t, b.do(t, "GET", b.url, "", map[string]string{"Host": "rebind.example"}), 403, "Host not allowed.")
	b.login(t)
	port := b.base[strings.LastIndex(b.base, ":"):]
	for _, h := range []string{"rebind.example" + port, "127.0.0.1.nip.io" + port, "192.168.1.2" + port} {
		wantError(t, b.do(t, "GET", "/api/state", "", map[string]string{"Host": h}), 403, "Host not allowed.")
	}
	u, _ := url.Parse(b.base)
	ck := b.client.Jar.Cookies(u)[0]
	for _, h := range []string{"localhost" + port, "127.0.0.1" + port, "[::1]" + port} {
		if r := b.do(t, "GET", "/api/state", "", map[string]string{"Host": h, "Cookie": ck.Name + "=" + ck.Value}); r.StatusCode != 200 {
			t.Errorf("Host %s: %d %s", h, r.StatusCode, r.Body)
		}
	}
}

// Another port of 127.0.0.1 is same-site and gets the SameSite cookie, so
// POSTs also pass the cross-origin check.
func TestAccess_CrossOriginPost(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	b.login(t)
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://127.0.0.1:1"}} {
		wantError(t, b.do(t, "POST", "/api/range/d1/edit-summary", `{"value":"x"}`, h), 403, "Cross-origin request refused.")
	}
	if r := b.do(t, "POST", "/api/range/d1/edit-summary", `{"value":"x"}`, map[string]string{"Sec-Fetch-Site": "same-origin"}); r.StatusCode != 200 {
		t.Errorf("same-origin: %d %s", r.StatusCode, r.Body)
	}
}

// GET / injects the ReviewState in place of the marker with `<` escaped,
// so atom text cannot close the script element.
func TestPage_InjectsEscapedState(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	b.login(t)
	r := b.do(t, "GET", "/", "", nil)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("page: %d %v", r.StatusCode, r.Header)
	}
	const open = `<script id="state" type="application/json">`
	i := strings.Index(r.Body, open)
	j := strings.Index(r.Body[i:], "</script>")
	script := r.Body[i+len(open) : i+j]
	if strings.Contains(script, "<") || strings.Contains(r.Body, "<!--MIDCOMPACT_STATE-->") || !strings.Contains(script, `\u003c/script\u003e`) {
		t.Errorf("state script not escaped: %.200s", script)
	}
	want, _ := b.plan.State(t.Context(), "review")
	wantJSON, _ := json.Marshal(want)
	if script != string(wantJSON) {
		t.Errorf("injected state differs from the payload")
	}
	for _, s := range []string{"/assets/page.js", "/assets/page.css"} {
		if a := b.do(t, "GET", s, "", nil); a.StatusCode != 200 || len(a.Body) < 100 {
			t.Errorf("%s: %d", s, a.StatusCode)
		}
	}
	if a := b.do(t, "GET", "/assets/page.js", "", nil); strings.Contains(a.Body, "http://") || strings.Contains(a.Body, "https://") || strings.Contains(a.Body, "commit\"") {
		t.Errorf("page script fetches elsewhere or commits")
	}
}

func TestRoutes_StateAndAtom(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	b.login(t)
	st := decodeState(t, b.do(t, "GET", "/api/state", "", nil))
	if st.View != "review" || len(st.Atoms) != 9 || len(st.Draft.Ranges) != 1 || st.Est != midcompact.DefaultTokenEstimate {
		t.Errorf("state %+v", st)
	}
	r := b.do(t, "GET", "/api/atom/a0002", "", nil)
	if r.StatusCode != 200 || r.Body != `{"ref":"a0002","kind":"assistant","contentChars":33,"imageCount":0,"fullText":"Assistant: old exploration \u003c/script\u003e\u003cb\u003e\u0026\u003c/b\u003e"}` {
		t.Errorf("atom: %d %s", r.StatusCode, r.Body)
	}
	wantError(t, b.do(t, "GET", "/api/atom/a0999", "", nil), 404, "Unknown atom a0999")
	wantError(t, b.do(t, "GET", "/nope", "", nil), 404, "not found")
	wantError(t, b.do(t, "POST", "/api/state", "{}", nil), 404, "not found")
	wantError(t, b.do(t, "DELETE", "/api/range/d1/remove", "", nil), 404, "not found")
}

func TestRoutes_Selection(t *testing.T) {
	rv := openBench(t, workbench.ViewReview, nil)
	rv.login(t)
	wantError(t, rv.do(t, "POST", "/api/selection", `{"spans":[],"keepRefs":[]}`, nil), 409, "Selection is not available in this view.")

	b := openBench(t, workbench.ViewSelection, nil)
	b.login(t)
	for _, body := range []string{`{}`, `{"spans":[]}`, `{"keepRefs":[]}`, `{"spans":null,"keepRefs":[]}`, `{"spans":{},"keepRefs":[]}`, `{"Spans":[],"keepRefs":[]}`, `{"spans":[1],"keepRefs":[]}`, `{"spans":[{"startRef":1}],"keepRefs":[]}`, `{"spans":[],"keepRefs":[2]}`} {
		wantError(t, b.do(t, "POST", "/api/selection", body, nil), 400, "Selection requires spans and keepRefs arrays.")
	}
	wantError(t, b.do(t, "POST", "/api/selection", `[]`, nil), 400, "Request body must be a JSON object.")
	wantError(t, b.do(t, "POST", "/api/selection", `{"spans":[{"startRef":"a0006","endRef":"a0006"}],"keepRefs":[]}`, nil), 400, "Cannot compress protected atom a0006; split around it or drop it.")
	wantError(t, b.do(t, "POST", "/api/selection", `{"spans":[{"startRef":"a0009","endRef":"a0001"}],"keepRefs":[]}`, nil), 400, "Span a0009→a0001 is reversed.")
	wantError(t, b.do(t, "POST", "/api/selection", `{"spans":[{"startRef":"a0001","endRef":"zz"}],"keepRefs":[]}`, nil), 400, "Unknown atom ref zz.")
	st := decodeState(t, b.do(t, "POST", "/api/selection", `{"spans":[{"startRef":"a0001","endRef":"a0002"},{"startRef":"a0005","endRef":"a0008"}],"keepRefs":[]}`, nil))
	var got []string
	for _, r := range st.Draft.Ranges {
		got = append(got, r.ID+":"+r.StartRef+"-"+r.EndRef+":"+r.Summary)
	}
	// The exact existing range d1 keeps its id; the protected a0006 splits
	// the second span.
	if strings.Join(got, ",") != "d1:a0001-a0002:,d2:a0005-a0005:,d3:a0007-a0008:" || st.View != "selection" {
		t.Errorf("ranges %v", got)
	}
	wantError(t, b.do(t, "POST", "/api/range/d1/edit-summary", `{"value":"x"}`, nil), 409, "Summary and topic editing belong to Review.")
	wantError(t, b.do(t, "POST", "/api/range/d1/edit-topic", `{"value":"x"}`, nil), 409, "Summary and topic editing belong to Review.")
	if st := decodeState(t, b.do(t, "POST", "/api/range/d2/remove", "", nil)); len(st.Draft.Ranges) != 2 {
		t.Errorf("remove in selection view: %d ranges", len(st.Draft.Ranges))
	}
	if _, saves, _, _ := b.plan.snapshot(); saves != 2 {
		t.Errorf("saves %d, want 2", saves)
	}
}

func TestRoutes_ReviewEdits(t *testing.T) {
	b := openBench(t, workbench.ViewReview, nil)
	b.login(t)
	for _, body := range []string{`{"value":"  \n\t"}`, `{}`, `{"value":null}`} {
		wantError(t, b.do(t, "POST", "/api/range/d1/edit-summary", body, nil), 400, "summary must not be empty")
	}
	wantError(t, b.do(t, "POST", "/api/range/d1/edit-summary", `{"value":3}`, nil), 400, "value must be a string.")
	wantError(t, b.do(t, "POST", "/api/range/d1/edit-summary", `nope`, nil), 400, "Request body must be a JSON object.")
	wantError(t, b.do(t, "POST", "/api/range/d9/edit-summary", `{"value":"x"}`, nil), 404, "Unknown range d9")
	wantError(t, b.do(t, "POST", "/api/range/d9/edit-topic", `{"value":"x"}`, nil), 404, "Unknown range d9")
	wantError(t, b.do(t, "POST", "/api/range/d9/remove", "", nil), 404, "Unknown range d9")
	st := decodeState(t, b.do(t, "POST", "/api/range/d1/edit-summary", `{"value":"\u00a0 Phase one summarized. \ufeff"}`, nil))
	if r := st.Draft.Ranges[0]; r.Summary != "Phase one summarized." || r.Topic != "old phase" || st.Draft.Revision != 2 {
		t.Errorf("after summary edit: %+v rev %d", r, st.Draft.Revision)
	}
	st = decodeState(t, b.do(t, "POST", "/api/range/d1/edit-topic", `{"value":"  "}`, nil))
	if r := st.Draft.Ranges[0]; r.Topic != "" || r.Summary != "Phase one summarized." {
		t.Errorf("after topic clear: %+v", r)
	}
	st = decodeState(t, b.do(t, "POST", "/api/range/d1/remove", "", nil))
	if len(st.Draft.Ranges) != 0 || st.Atoms[0].OwningRangeID != "" {
		t.Errorf("after remove: %+v", st.Draft)
	}
	big := `{"value":"` + strings.Repeat("x", 1<<20) + `"}`
	wantError(t, b.do(t, "POST", "/api/range/d1/edit-summary", big, nil), 413, "Request body too large.")
	if _, saves, _, _ := b.plan.snapshot(); saves != 3 {
		t.Errorf("saves %d, want 3", saves)
	}
}
