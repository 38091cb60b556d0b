package live

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// fakeUpstream is a local stand-in for POST /v1/realtime/client_secrets.
type fakeUpstream struct {
	mu     sync.Mutex
	bodies [][]byte
	auth   []string
	status int
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	status := f.status
	f.mu.Unlock()
	if r.URL.Path != "/v1/realtime/client_secrets" || r.Method != "POST" {
		http.NotFound(w, r)
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"message":"echo me not"}}`)
		return
	}
	io.WriteString(w, `{"value":"ek_minted_secret","expires_at":1900000000,"session":{}}`)
}

func mintRig(t *testing.T, key string, up *fakeUpstream) *rig {
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	return newRig(t, func(o *Options) {
		o.Mint = MintOptions{BaseURL: srv.URL + "/", Model: "gpt-realtime-test", Voice: "cedar", APIKey: func() string { return key }}
	})
}

func (r *rig) mint(hdr map[string]string) (int, string) {
	h := map[string]string{"X-Riffrec-Session": r.sid}
	for k, v := range hdr {
		h[k] = v
	}
	code, body, _ := r.do("POST", "/mint", r.page, `{"session_id":"`+r.sid+`"}`, h)
	return code, body
}

func TestMint(t *testing.T) {
	t.Run("body, brief and overrides", func(t *testing.T) {
		up := &fakeUpstream{}
		r := mintRig(t, "sk-envkey-000000000000", up)
		brief := "Routes: /settings. Components: SaveButton."
		os.WriteFile(filepath.Join(r.e.opts.Root, "state/brief.md"), []byte(brief), 0o600)
		code, body := r.mint(nil)
		if code != 200 || body != `{"client_secret":"ek_minted_secret","expires_at":1900000000,"model":"gpt-realtime-test"}` {
			t.Fatalf("%d %s", code, body)
		}
		if up.auth[0] != "Bearer sk-envkey-000000000000" {
			t.Fatal("upstream did not get the key")
		}
		var got mintRequestBody
		if err := json.Unmarshal(up.bodies[0], &got); err != nil {
			t.Fatal(err)
		}
		want := buildMintBody("gpt-realtime-test", "cedar", brief, true)
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b jsontext.Value) bool {
			x, y := a.Clone(), b.Clone()
			return x.Canonicalize() == nil && y.Canonicalize() == nil && string(x) == string(y)
		})); diff != "" {
			t.Fatal(diff)
		}
		if got.Session.Instructions != defaultPersona+"\n\n[SESSION BRIEF]\n"+brief || !strings.Contains(defaultPersona, "[SCREEN CONTEXT]") {
			t.Fatal("instructions")
		}
		// Tools go out verbatim, in order, from the shared file.
		shared, err := os.ReadFile("../../shared/live-endpoint/interviewer-tools.json")
		if err != nil {
			shared = interviewerTools
		}
		var a, b any
		json.Unmarshal(shared, &a)
		json.Unmarshal(got.Session.Tools, &b)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatal(diff)
		}
		if got.Session.Audio.Output.Voice != "cedar" || got.Session.Model != "gpt-realtime-test" || got.ExpiresAfter.Seconds != 600 {
			t.Fatalf("%+v", got)
		}
		// Header key wins for one mint; nothing secret lands under state/.
		r.mint(map[string]string{"X-Riffrec-OpenAI-Key": "sk-headerkey-1111111111"})
		if up.auth[1] != "Bearer sk-headerkey-1111111111" {
			t.Fatal("header key not used")
		}
		filepath.WalkDir(filepath.Join(r.e.opts.Root, "state"), func(p string, d os.DirEntry, err error) error {
			if d != nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				for _, s := range []string{"sk-envkey", "sk-headerkey", "ek_minted_secret"} {
					if strings.Contains(string(data), s) {
						t.Errorf("%s holds %s", filepath.Base(p), s)
					}
				}
			}
			return nil
		})
	})
	t.Run("no key", func(t *testing.T) {
		r := mintRig(t, "", &fakeUpstream{})
		if code, body := r.mint(nil); code != 503 || body != `{"reason":"no_key"}` {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("upstream 401", func(t *testing.T) {
		r := mintRig(t, "sk-k-00000000", &fakeUpstream{status: 401})
		if code, body := r.mint(nil); code != 502 || body != `{"reason":"openai_error","upstream_status":401}` {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("brief with a secret is refused before upstream", func(t *testing.T) {
		up := &fakeUpstream{}
		r := mintRig(t, "sk-k-00000000", up)
		os.WriteFile(filepath.Join(r.e.opts.Root, "state/brief.md"), []byte("use sk-abcdefghijklmnop"), 0o600)
		if code, body := r.mint(nil); code != 503 || body != `{"reason":"brief_contains_secret"}` || len(up.bodies) != 0 {
			t.Fatalf("%d %s (%d upstream calls)", code, body, len(up.bodies))
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		r := mintRig(t, "sk-k-00000000", &fakeUpstream{})
		for i := 0; i < 5; i++ {
			if code, _ := r.mint(nil); code != 200 {
				t.Fatalf("mint %d: %d", i, code)
			}
		}
		if code, body := r.mint(nil); code != 429 || !strings.HasPrefix(body, `{"retry_after":`) {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("tls gate", func(t *testing.T) {
		up := &fakeUpstream{}
		r := mintRig(t, "sk-k-00000000", up)
		call := func(remote, proto string) int {
			req := httptest.NewRequest("POST", "/mint", strings.NewReader(`{}`))
			req.RemoteAddr = remote
			req.Header.Set("Authorization", "Bearer page-tok")
			req.Header.Set("X-Riffrec-Session", r.sid)
			if proto != "" {
				req.Header.Set("X-Forwarded-Proto", proto)
			}
			rec := httptest.NewRecorder()
			r.e.Handler().ServeHTTP(rec, req)
			return rec.Code
		}
		if c := call("192.168.1.9:5555", "https"); c != 403 {
			t.Fatalf("untrusted LAN peer: %d", c)
		}
		r.e.opts.TrustProxy = []netip.Addr{netip.MustParseAddr("192.168.1.9")}
		if c := call("192.168.1.9:5555", "http"); c != 403 {
			t.Fatalf("trusted proxy over http: %d", c)
		}
		if c := call("192.168.1.9:5555", "https, http"); c != 200 {
			t.Fatalf("trusted proxy over https: %d", c)
		}
	})
}

func TestBriefHasSecret(t *testing.T) {
	for s, want := range map[string]bool{
		"routes /a /b":                    false,
		"key ghp_abcdefghijklmnopqrstu":   true,
		"AKIAABCDEFGHIJKLMNOP":            true,
		"API_KEY=abcdef123":               true,
		"token: short":                    false,
		"https://x.test/cb?token=abc":     true,
		"https://user:pw@host.test/":      true,
		"-----BEGIN RSA PRIVATE KEY-----": true,
		"design token --color-primary":    false,
	} {
		if got := briefHasSecret(s); got != want {
			t.Errorf("%q: got %v", s, got)
		}
	}
}
