package taskbar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

const testToken = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" // 43 base64url chars

// inProcessOwner starts a runtime over the fake Pi (tbtest.NewRuntime).
func inProcessOwner(t testing.TB, opts rt.Options, env ...string) (taskbar.Owner, *rt.Runtime) {
	t.Helper()
	r := tbtest.NewRuntime(t, opts, env...)
	return taskbar.InProcess(r), r
}

// request builds a loopback request with a valid CSRF cookie and header.
func request(method, path string, body []byte) *http.Request {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Host = "localhost"
	req.RemoteAddr = "127.0.0.1:40000"
	req.AddCookie(&http.Cookie{Name: taskbar.CSRFCookieName, Value: testToken})
	req.Header.Set(taskbar.CSRFHeader, testToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(h http.Handler, req *http.Request) response {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{rec.Code, rec.Header(), rec.Body.Bytes()}
}

// view is the decoded body: a snapshot, or an error with an optional one.
type view struct {
	rt.Snapshot
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Inner *rt.Snapshot `json:"snapshot"`
}

func (v view) snap() rt.Snapshot {
	if v.Inner != nil {
		return *v.Inner
	}
	return v.Snapshot
}

func decodeView(t testing.TB, b []byte) view {
	t.Helper()
	var v view
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// taskBody returns the minimal task fixture with another prompt.
func taskBody(t testing.TB, prompt string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(tbtest.ContractDir(t), "fixtures", "tasks", "minimal-task.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	m["prompt"], _ = json.Marshal(prompt)
	b, _ := json.Marshal(m)
	return b
}

// poll reads GET /state until cond holds. The bound only stops a broken
// run from hanging.
func poll(t testing.TB, h http.Handler, what string, cond func(rt.Snapshot) bool) rt.Snapshot {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := do(h, request("GET", taskbar.DefaultMountBase+"/state", nil))
		if res.status == http.StatusOK {
			if s := decodeView(t, res.body).snap(); cond(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; last %d %s", what, res.status, res.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isReady(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady }

type scenario struct {
	Name    string `json:"name"`
	Request struct {
		Method      string `json:"method"`
		Path        string `json:"path"`
		BodyFixture string `json:"body_fixture"`
	} `json:"request"`
	Response struct {
		Status int            `json:"status"`
		Body   map[string]any `json:"body"`
	} `json:"response"`
}

// scenarioSetup prepares the state a scenario file presumes (reference §9:
// the upstream harness drives the fake by prompt keywords) and returns the
// ids the :active and :completed placeholders stand for.
type scenarioSetup struct {
	env   []string
	setup func(t *testing.T, h http.Handler) (active, completed string)
}

func submit(t *testing.T, h http.Handler, prompt string) string {
	t.Helper()
	res := do(h, request("POST", taskbar.DefaultMountBase+"/tasks", taskBody(t, prompt)))
	if res.status != http.StatusAccepted {
		t.Fatalf("setup submit: %d %s", res.status, res.body)
	}
	return decodeView(t, res.body).Task.ID
}

func held(t *testing.T, h http.Handler) (string, string) {
	id := submit(t, h, "hold this task")
	poll(t, h, "held", func(s rt.Snapshot) bool { return s.Task.Output == "holding" })
	return id, ""
}

func completed(t *testing.T, h http.Handler) (string, string) {
	id := submit(t, h, "Explain the cards page.")
	poll(t, h, "completed", func(s rt.Snapshot) bool { return s.Task.Status == rt.TaskCompleted })
	return "", id
}

func cancelled(settle bool) func(t *testing.T, h http.Handler) (string, string) {
	return func(t *testing.T, h http.Handler) (string, string) {
		prompt := "ignore abort" // abort answered, never settled: stays cancelling
		if settle {
			prompt = "hold this task"
		}
		id := submit(t, h, prompt)
		poll(t, h, "held", func(s rt.Snapshot) bool { return s.Task.Output == "holding" })
		if res := do(h, request("DELETE", taskbar.DefaultMountBase+"/tasks/"+id, nil)); res.status != http.StatusAccepted {
			t.Fatalf("setup cancel: %d %s", res.status, res.body)
		}
		if settle {
			poll(t, h, "cancelled", func(s rt.Snapshot) bool { return s.Task.Status == rt.TaskCancelled })
		}
		return id, ""
	}
}

var scenarioSetups = map[string]scenarioSetup{
	"foundation-state":       {},
	"phoenix-whole-page":     {},
	"focused-task":           {},
	"cancellation-accepted":  {setup: held},
	"cancellation-repeated":  {setup: cancelled(false)},
	"cancellation-settled":   {setup: cancelled(true)},
	"cancellation-wrong-id":  {setup: held},
	"cancellation-completed": {setup: completed},
	"session-reset-accepted": {setup: completed},
	"session-reset-busy":     {setup: held},
	"session-reset-rejected": {env: fakepi.Config{Scenario: "reset-reject"}.Env(), setup: completed},
}

// runScenarios runs every HTTP scenario of the contract against a handler
// over the owner newOwner returns.
func runScenarios(t *testing.T, newOwner func(t *testing.T, env ...string) taskbar.Owner) {
	files, err := filepath.Glob(filepath.Join(tbtest.ContractDir(t), "fixtures", "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			setup, ok := scenarioSetups[name]
			if !ok {
				t.Fatalf("scenario %s has no setup: add one", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var sc scenario
			if err := json.Unmarshal(raw, &sc); err != nil {
				t.Fatal(err)
			}
			h := taskbar.NewHandler(newOwner(t, setup.env...), nil)
			poll(t, h, "ready", isReady)
			var active, done string
			if setup.setup != nil {
				active, done = setup.setup(t, h)
			}
			path := sc.Request.Path
			path = strings.ReplaceAll(path, ":active", active)
			path = strings.ReplaceAll(path, ":completed", done)
			path = strings.ReplaceAll(path, ":unknown", "unknown-task")
			var body []byte
			if sc.Request.BodyFixture != "" {
				if body, err = os.ReadFile(filepath.Join(tbtest.ContractDir(t), sc.Request.BodyFixture)); err != nil {
					t.Fatal(err)
				}
			}
			res := do(h, request(sc.Request.Method, taskbar.DefaultMountBase+path, body))
			if res.status != sc.Response.Status {
				t.Fatalf("status = %d, want %d; body %s", res.status, sc.Response.Status, res.body)
			}
			checkNoStore(t, res)
			v := decodeView(t, res.body)
			s := v.snap()
			for key, want := range sc.Response.Body {
				var got any
				switch key {
				case "contract_version":
					got = float64(s.ContractVersion)
				case "session_status":
					got = string(s.Session.Status)
				case "task_status":
					got = "<no task>"
					if s.Task != nil {
						got = string(s.Task.Status)
					}
				case "task_activity":
					got = ""
					if s.Task != nil {
						got = s.Task.Activity
					}
				case "task_is_null":
					got = s.Task == nil
				case "error_code":
					got = "<no error>"
					if v.Error != nil {
						got = v.Error.Code
					}
				case "terminal_task_status":
					id := s.Task.ID
					fin := poll(t, h, "terminal", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.ID == id && s.Task.Status.Terminal() })
					got = string(fin.Task.Status)
					if w := sc.Response.Body["terminal_output"]; w != fin.Task.Output {
						t.Errorf("terminal_output = %q, want %q", fin.Task.Output, w)
					}
				case "terminal_output":
					continue // checked with terminal_task_status
				default:
					t.Fatalf("unknown assertion key %q", key)
				}
				if got != want {
					t.Errorf("%s = %v, want %v (body %s)", key, got, want, res.body)
				}
			}
		})
	}
}

func checkNoStore(t testing.TB, res response) {
	t.Helper()
	if got := res.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q", got)
	}
	for k := range res.header {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			t.Errorf("CORS header %s set", k)
		}
	}
}

func TestHandler_ScenariosInProcess(t *testing.T) {
	runScenarios(t, func(t *testing.T, env ...string) taskbar.Owner {
		o, _ := inProcessOwner(t, rt.Options{AbortDeadline: time.Hour}, env...)
		return o
	})
}

func TestHandler_Access(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	tests := []struct {
		host, peer string
		allowed    []string
		want       int
	}{
		{"localhost", "127.0.0.1:1", nil, 200},
		{"LOCALHOST.:3000", "127.0.0.1:1", nil, 200},
		{"app.localhost:3000", "127.0.0.1:1", nil, 200},
		{"127.0.0.1:3000", "127.0.0.1:1", nil, 200},
		{"[::1]:3000", "[::1]:1", nil, 200},
		{"[0:0::1]", "127.0.0.2:1", nil, 200},
		{"localhost", "[::ffff:127.0.0.1]:1", nil, 200},
		{"bad_name.localhost", "127.0.0.1:1", nil, 403},
		{"example.com", "127.0.0.1:1", nil, 403},
		{"dev.example.com", "127.0.0.1:1", []string{"dev.example.com"}, 200},
		{"localhost", "192.168.1.5:1", nil, 403},
		{"localhost", "192.168.1.5:1", []string{"dev.example.com"}, 403},
		{"dev.example.com", "192.168.1.5:1", nil, 403},
		{"dev.example.com:8080", "192.168.1.5:1", []string{"dev.example.com"}, 200},
		{"DEV.example.com.", "192.168.1.5:1", []string{"dev.example.com"}, 200},
		{"sub.dev.example.com", "192.168.1.5:1", []string{"dev.example.com"}, 403},
		{"[2001:db8::1]", "[2001:db8::2]:1", []string{"2001:0DB8::0:1"}, 200},
		{"10.0.0.1", "10.0.0.9:1", []string{"10.0.0.1"}, 200},
		{"localhost", "not-an-address", nil, 403},
		{"", "127.0.0.1:1", nil, 403},
		{"[::1%eth0]", "127.0.0.1:1", nil, 403},
	}
	for _, tc := range tests {
		t.Run(tc.host+"_"+tc.peer, func(t *testing.T) {
			h := taskbar.NewHandler(o, &taskbar.Options{AllowedHosts: tc.allowed})
			for _, path := range []string{"/state", "/assets/pi_browser_taskbar.js", "/nope"} {
				req := request("GET", taskbar.DefaultMountBase+path, nil)
				req.Host, req.RemoteAddr = tc.host, tc.peer
				req.Header.Set("X-Forwarded-For", "127.0.0.1")
				req.Header.Set("X-Forwarded-Host", "localhost")
				req.Header.Set("Forwarded", "for=127.0.0.1;host=localhost")
				res := do(h, req)
				if (res.status == http.StatusForbidden) != (tc.want == http.StatusForbidden) {
					t.Fatalf("%s: status %d, want %d", path, res.status, tc.want)
				}
				checkNoStore(t, res)
				if res.status == http.StatusForbidden {
					v := decodeView(t, res.body)
					if v.Error.Code != "forbidden" || v.Error.Message != "Pi Browser Taskbar is not allowed from this host or client address" || v.Inner != nil {
						t.Fatalf("body %s", res.body)
					}
				}
			}
		})
	}
}

func TestHandler_CSRF(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	h := taskbar.NewHandler(o, nil)
	poll(t, h, "ready", isReady)
	other := strings.Repeat("B", 43)
	tests := []struct {
		name   string
		mutate func(*http.Request)
	}{
		{"no header", func(r *http.Request) { r.Header.Del(taskbar.CSRFHeader) }},
		{"no cookie", func(r *http.Request) { r.Header.Del("Cookie") }},
		{"mismatch", func(r *http.Request) { r.Header.Set(taskbar.CSRFHeader, other) }},
		{"malformed equal", func(r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: taskbar.CSRFCookieName, Value: "x"})
			r.Header.Set(taskbar.CSRFHeader, "x")
		}},
		{"cross-site fetch", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }},
		{"cross origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }},
	}
	for _, tc := range tests {
		for _, m := range []struct{ method, path string }{
			{"POST", "/tasks"}, {"DELETE", "/tasks/x"}, {"POST", "/session/reset"},
		} {
			t.Run(tc.name+" "+m.method+m.path, func(t *testing.T) {
				req := request(m.method, taskbar.DefaultMountBase+m.path, taskBody(t, "hi"))
				tc.mutate(req)
				res := do(h, req)
				v := decodeView(t, res.body)
				if res.status != 422 || v.Error == nil || v.Error.Code != "invalid_csrf" || v.Error.Message != "The session CSRF token is invalid" {
					t.Fatalf("%d %s", res.status, res.body)
				}
			})
		}
	}
	// The session was never touched.
	if s := poll(t, h, "ready", isReady); s.Task != nil {
		t.Fatalf("a rejected mutation reached Pi: %+v", s.Task)
	}
	t.Run("same-origin accepted", func(t *testing.T) {
		req := request("POST", taskbar.DefaultMountBase+"/tasks", taskBody(t, "hi"))
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if res := do(h, req); res.status != http.StatusAccepted {
			t.Fatalf("%d %s", res.status, res.body)
		}
	})
}

func TestHandler_CSRFToken(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	h := taskbar.NewHandler(o, &taskbar.Options{MountBase: "/dev/tb"})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/page", nil)
	tok := h.CSRFToken(rec, req)
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Value != tok || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Name != taskbar.CSRFCookieName {
		t.Fatalf("cookie %+v token %q", cookies, tok)
	}
	// A browser sends the cookie back on the next page load (another path
	// than the mount) and on the API below the mount, so a second tab gets
	// the same token instead of invalidating the first tab's.
	jar, _ := cookiejar.New(nil)
	page, _ := url.Parse("http://localhost/page")
	jar.SetCookies(page, cookies)
	for _, u := range []string{"http://localhost/other/page", "http://localhost/dev/tb/tasks"} {
		target, _ := url.Parse(u)
		if got := jar.Cookies(target); len(got) != 1 || got[0].Value != tok {
			t.Fatalf("cookie not sent to %s: %v", u, got)
		}
	}
	// With the cookie the same token comes back and no cookie is set.
	rec2 := httptest.NewRecorder()
	req2 := httptest.NewRequest("GET", "/other/page", nil)
	for _, c := range jar.Cookies(page) {
		req2.AddCookie(c)
	}
	if got := h.CSRFToken(rec2, req2); got != tok || len(rec2.Result().Cookies()) != 0 {
		t.Fatalf("second token %q cookies %v", got, rec2.Result().Cookies())
	}
	if other := h.CSRFToken(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)); other == tok {
		t.Fatal("two sessions got the same token")
	}
	if h.RemoteAccess() || !taskbar.NewHandler(o, &taskbar.Options{AllowedHosts: []string{"dev.example.com"}}).RemoteAccess() {
		t.Fatal("RemoteAccess does not follow allowed_hosts")
	}
}

func TestHandler_BodyErrors(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	h := taskbar.NewHandler(o, nil)
	poll(t, h, "ready", isReady)
	big := append(taskBody(t, "x"), bytes.Repeat([]byte(" "), 131072)...)
	tests := []struct {
		name   string
		body   []byte
		status int
		code   string
		msg    string
	}{
		{"oversized", big, 413, "oversized_payload", "Request body exceeds 128 KiB"},
		{"not json", []byte("{nope"), 400, "malformed_json", "Request body must be valid JSON"},
		{"invalid utf-8", []byte("{\"prompt\":\"\xff\"}"), 400, "malformed_json", "Request body must be valid JSON"},
		{"unknown field", []byte(`{"prompt":"x","context":{},"extra":1}`), 422, "invalid_task", "Task request is invalid"},
		{"empty prompt", taskBody(t, "   "), 422, "invalid_task", "Task request is invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := do(h, request("POST", taskbar.DefaultMountBase+"/tasks", tc.body))
			v := decodeView(t, res.body)
			if res.status != tc.status || v.Error == nil || v.Error.Code != tc.code || v.Error.Message != tc.msg || v.Inner != nil {
				t.Fatalf("%d %s", res.status, res.body)
			}
			checkNoStore(t, res)
		})
	}
}

func TestHandler_AssetsAndRoutes(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	assets := fstest.MapFS{
		"pi_browser_taskbar.js":  {Data: []byte("console.log(1)")},
		"pi_browser_taskbar.css": {Data: []byte("x{}")},
		"secret.txt":             {Data: []byte("no")},
	}
	h := taskbar.NewHandler(o, &taskbar.Options{Assets: assets})
	tests := []struct {
		method, path string
		status       int
		ctype, body  string
	}{
		{"GET", "/assets/pi_browser_taskbar.js", 200, "text/javascript; charset=utf-8", "console.log(1)"},
		{"GET", "/assets/pi_browser_taskbar.css", 200, "text/css; charset=utf-8", "x{}"},
		{"GET", "/assets/secret.txt", 404, "application/json", ""},
		{"GET", "/assets/missing.js", 404, "application/json", ""},
		{"GET", "/assets/..%2fx.js", 404, "application/json", ""},
		{"GET", "/nope", 404, "application/json", ""},
		{"PUT", "/state", 404, "application/json", ""},
	}
	for _, tc := range tests {
		req := request(tc.method, taskbar.DefaultMountBase+tc.path, nil)
		req.Header.Del(taskbar.CSRFHeader)
		res := do(h, req)
		if res.status != tc.status || res.header.Get("Content-Type") != tc.ctype || (tc.body != "" && string(res.body) != tc.body) {
			t.Errorf("%s %s = %d %q %s", tc.method, tc.path, res.status, res.header.Get("Content-Type"), res.body)
		}
		checkNoStore(t, res)
		if tc.status == 404 {
			if v := decodeView(t, res.body); v.Error.Code != "not_found" || v.Error.Message != "Taskbar route was not found" {
				t.Errorf("%s: %s", tc.path, res.body)
			}
		}
	}
}

type deadOwner struct{}

func (deadOwner) State(context.Context) ([]byte, error) { return nil, context.DeadlineExceeded }
func (deadOwner) Submit(context.Context, string, string) (rt.Result, []byte, error) {
	return "", nil, context.DeadlineExceeded
}
func (deadOwner) Cancel(context.Context, string) (rt.Result, []byte, error) {
	return "", nil, context.DeadlineExceeded
}
func (deadOwner) Reset(context.Context) (rt.Result, []byte, error) {
	return "", nil, context.DeadlineExceeded
}

func TestHandler_OwnerUnavailable(t *testing.T) {
	h := taskbar.NewHandler(deadOwner{}, nil)
	for _, m := range []struct{ method, path string }{{"GET", "/state"}, {"POST", "/tasks"}, {"DELETE", "/tasks/x"}, {"POST", "/session/reset"}} {
		var body []byte
		if m.path == "/tasks" {
			body = taskBody(t, "x")
		}
		res := do(h, request(m.method, taskbar.DefaultMountBase+m.path, body))
		v := decodeView(t, res.body)
		s := v.snap()
		if res.status != 503 || v.Error.Code != "unavailable" || v.Error.Message != "Pi is not ready" || v.Inner == nil ||
			s.Session.Status != rt.SessionUnavailable || *s.Session.Error != "Project broker is unavailable" || s.Session.ID != nil || s.Task != nil {
			t.Errorf("%s %s: %d %s", m.method, m.path, res.status, res.body)
		}
	}
}

// TestHandler_ConcurrentSubmissions sends 50 POST /tasks at once over real
// HTTP: admission is atomic, so exactly one is accepted.
func TestHandler_ConcurrentSubmissions(t *testing.T) {
	owners := map[string]func(t *testing.T) taskbar.Owner{
		"in-process": func(t *testing.T) taskbar.Owner { o, _ := inProcessOwner(t, rt.Options{}); return o },
		"broker":     func(t *testing.T) taskbar.Owner { return brokerProject(t)() },
	}
	for name, newOwner := range owners {
		t.Run(name, func(t *testing.T) { concurrentSubmissions(t, newOwner(t)) })
	}
}

func concurrentSubmissions(t *testing.T, o taskbar.Owner) {
	h := taskbar.NewHandler(o, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	poll(t, h, "ready", isReady)
	body := taskBody(t, "hold this task")
	var wg sync.WaitGroup
	statuses := make(chan int, 50)
	start := make(chan struct{})
	for range 50 {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", srv.URL+taskbar.DefaultMountBase+"/tasks", bytes.NewReader(body))
			req.AddCookie(&http.Cookie{Name: taskbar.CSRFCookieName, Value: testToken})
			req.Header.Set(taskbar.CSRFHeader, testToken)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			var v view
			json.NewDecoder(res.Body).Decode(&v)
			res.Body.Close()
			if res.StatusCode == 409 && (v.Error.Code != "busy" || v.Inner == nil || v.Inner.Session.Status != rt.SessionBusy) {
				t.Errorf("409 body: %+v", v)
			}
			statuses <- res.StatusCode
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[202] != 1 || counts[409] != 49 {
		t.Fatalf("statuses = %v, want one 202 and 49 409", counts)
	}
}
