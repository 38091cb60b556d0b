package inject_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/taskbar/inject"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

const snip = `<i id="SNIP"></i>`

func middleware(maxBuf int) *inject.Middleware {
	return &inject.Middleware{
		MaxBuffer: maxBuf,
		Snippet: func(w http.ResponseWriter, r *http.Request) []byte {
			w.Header().Add("Set-Cookie", "csrf=1")
			return []byte(snip)
		},
	}
}

// serve runs h behind the middleware and returns the recorded response.
func serve(t *testing.T, m *inject.Middleware, method string, h http.HandlerFunc) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, "/", nil)
	m.Handler(h).ServeHTTP(rec, req)
	return rec
}

func htmlHandler(ct string, status int, chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		total := 0
		for _, c := range chunks {
			total += len(c)
		}
		w.Header().Set("Content-Length", strconv.Itoa(total))
		w.Header().Set("ETag", `"v1"`)
		if status != 0 {
			w.WriteHeader(status)
		}
		for _, c := range chunks {
			io.WriteString(w, c)
		}
	}
}

func TestMiddleware_Insertion(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"before body end", []string{"<!doctype html><html><head></head><body><p>x</p></body></html>"},
			"<!doctype html><html><head></head><body><p>x</p>" + snip + "</body></html>"},
		{"upper case end tag", []string{"<HTML><BODY>x</BODY ></HTML>"}, "<HTML><BODY>x" + snip + "</BODY ></HTML>"},
		{"before html end without body end", []string{"<html><p>x</html>"}, "<html><p>x" + snip + "</html>"},
		{"at the end of a document", []string{"<!DOCTYPE html><title>t</title><p>x"}, "<!DOCTYPE html><title>t</title><p>x" + snip},
		{"fragment untouched", []string{"<li>one</li><li>two</li>"}, "<li>one</li><li>two</li>"},
		{"marker in comment ignored", []string{"<body><!-- </body> -->x</body>"}, "<body><!-- </body> -->x" + snip + "</body>"},
		{"marker in script ignored", []string{`<body><script>s="</body>"</script>y</body>`},
			`<body><script>s="</body>"</script>y` + snip + "</body>"},
		{"marker in attribute ignored", []string{`<body><a title="</body>">a</a></body>`},
			`<body><a title="</body>">a</a>` + snip + "</body>"},
		{"marker in title ignored", []string{`<html><title></body></title><body></body>`},
			`<html><title></body></title><body>` + snip + "</body>"},
		{"body-like tag names do not count", []string{"<body></bodyx></bod></body>"}, "<body></bodyx></bod>" + snip + "</body>"},
		{"marker split across writes", []string{"<body>x</b", "o", "dy>"}, "<body>x" + snip + "</body>"},
		{"abrupt empty comment", []string{"<body><!-->x</body>"}, "<body><!-->x" + snip + "</body>"},
		{"first marker wins", []string{"<body>a</body>b</body>"}, "<body>a" + snip + "</body>b</body>"},
	}
	for _, tt := range tests {
		for _, maxBuf := range []int{0, -1} {
			t.Run(fmt.Sprintf("%s/maxbuf=%d", tt.name, maxBuf), func(t *testing.T) {
				rec := serve(t, middleware(maxBuf), "GET", htmlHandler("text/html; charset=utf-8", 0, tt.chunks...))
				if got := rec.Body.String(); got != tt.want {
					t.Errorf("body = %q, want %q", got, tt.want)
				}
				injected := strings.Contains(tt.want, snip)
				cl := rec.Header().Get("Content-Length")
				switch {
				case !injected && maxBuf == 0 && cl != strconv.Itoa(len(tt.want)):
					t.Errorf("untouched Content-Length = %q, want %d", cl, len(tt.want))
				case injected && maxBuf == 0 && cl != strconv.Itoa(len(tt.want)):
					t.Errorf("Content-Length = %q, want %d", cl, len(tt.want))
				case injected && maxBuf < 0 && cl != "":
					t.Errorf("streamed Content-Length = %q, want none", cl)
				}
				if injected && rec.Header().Get("ETag") != "" {
					t.Errorf("ETag kept on a rewritten page")
				}
			})
		}
	}
}

func TestMiddleware_Untouched(t *testing.T) {
	page := "<!doctype html><body>x</body>"
	gz := func() string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		io.WriteString(zw, page)
		zw.Close()
		return b.String()
	}()
	tests := []struct {
		name   string
		method string
		h      http.HandlerFunc
		body   string
	}{
		{"json", "GET", htmlHandler("application/json", 0, page), page},
		{"plain text", "GET", htmlHandler("text/plain", 0, page), page},
		{"HEAD", "HEAD", htmlHandler("text/html", 0, page), page}, // the recorder keeps HEAD bodies
		{"304", "GET", htmlHandler("text/html", http.StatusNotModified), ""},
		{"204", "GET", htmlHandler("text/html", http.StatusNoContent), ""},
		{"206", "GET", htmlHandler("text/html", http.StatusPartialContent, page), page},
		{"content range", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-4/5")
			htmlHandler("text/html", 0, page)(w, r)
		}, page},
		{"gzip", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			htmlHandler("text/html", 0, gz)(w, r)
		}, gz},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, middleware(0), tt.method, tt.h)
			if got := rec.Body.String(); got != tt.body {
				t.Errorf("body = %q, want %q", got, tt.body)
			}
			if rec.Header().Get("Set-Cookie") != "" {
				t.Errorf("Snippet was called for an untouched response")
			}
			if tt.body != "" && rec.Header().Get("ETag") == "" {
				t.Errorf("ETag removed from an untouched response")
			}
		})
	}
}

func TestMiddleware_SniffedHTML(t *testing.T) {
	rec := serve(t, middleware(0), "GET", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<!DOCTYPE html><body>hi</body>")
	})
	if got, want := rec.Body.String(), "<!DOCTYPE html><body>hi"+snip+"</body>"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); !inject.IsHTML(ct) {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestMiddleware_StatusAndCookieKept(t *testing.T) {
	rec := serve(t, middleware(0), "GET", htmlHandler("text/html", http.StatusNotFound, "<body>missing</body>"))
	if rec.Code != http.StatusNotFound {
		t.Errorf("status = %d, want 404", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), snip) {
		t.Errorf("error page not injected: %q", rec.Body.String())
	}
	if rec.Header().Get("Set-Cookie") != "csrf=1" {
		t.Errorf("Snippet header not sent: %v", rec.Header())
	}
}

func TestMiddleware_BufferOverflowStreams(t *testing.T) {
	big := strings.Repeat("a", 300)
	rec := serve(t, middleware(100), "GET", htmlHandler("text/html", 0, "<body>", big, "</body>"))
	if got, want := rec.Body.String(), "<body>"+big+snip+"</body>"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
	if cl := rec.Header().Get("Content-Length"); cl != "" {
		t.Errorf("Content-Length = %q after overflow, want none", cl)
	}
}

// TestMiddleware_FlushThrough checks on a real connection that a flushed
// part of a page reaches the client before the handler finishes.
func TestMiddleware_FlushThrough(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(middleware(0).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><body><p>first</p>")
		http.NewResponseController(w).Flush()
		<-release
		io.WriteString(w, "<p>second</p></body>")
	})))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first := make([]byte, len("<!doctype html><body><p>first</p>"))
	if _, err := io.ReadFull(br, first); err != nil {
		t.Fatalf("read flushed part: %v", err)
	}
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(first)+string(rest), "<!doctype html><body><p>first</p><p>second</p>"+snip+"</body>"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

func TestMiddleware_HijackPassesThrough(t *testing.T) {
	srv := httptest.NewServer(middleware(0).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		brw.Flush()
	})))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Errorf("body = %q", b)
	}
}

func TestMiddleware_EmptySnippetUntouched(t *testing.T) {
	m := &inject.Middleware{Snippet: func(http.ResponseWriter, *http.Request) []byte { return nil }}
	page := "<body>x</body>"
	rec := serve(t, m, "GET", htmlHandler("text/html", 0, page))
	if rec.Body.String() != page || rec.Header().Get("ETag") == "" {
		t.Errorf("body = %q, header = %v", rec.Body.String(), rec.Header())
	}
}

// FuzzMiddleware checks the whole middleware on arbitrary pages and write
// boundaries: removing the one snippet gives back the page, buffered and
// streamed output agree, and a buffered page has an exact Content-Length.
func FuzzMiddleware(f *testing.F) {
	f.Add("<!doctype html><body><p>x</p></body></html>", 5, 20)
	f.Add("<li>x</li>", 1, 3)
	f.Add("<body><script></body></script></bo", 10, 30)
	f.Fuzz(func(t *testing.T, page string, c1, c2 int) {
		if c1 < 0 {
			c1 = -c1
		}
		if c2 < 0 {
			c2 = -c2
		}
		c1 %= len(page) + 1
		c2 %= len(page) + 1
		if c1 > c2 {
			c1, c2 = c2, c1
		}
		chunks := []string{page[:c1], page[c1:c2], page[c2:]}
		var bodies [2]string
		for i, maxBuf := range []int{0, -1} {
			rec := serve(t, middleware(maxBuf), "GET", htmlHandler("text/html", 0, chunks...))
			got := rec.Body.String()
			if n := strings.Count(got, snip) - strings.Count(page, snip); n != 0 && n != 1 {
				t.Fatalf("snippet added %d times: %q", n, got)
			}
			if i := strings.Index(got, snip); i >= 0 && strings.Count(page, snip) == 0 {
				if got[:i]+got[i+len(snip):] != page {
					t.Fatalf("page changed beyond the snippet: %q -> %q", page, got)
				}
			}
			if maxBuf == 0 && rec.Header().Get("Content-Length") != strconv.Itoa(len(got)) {
				t.Fatalf("Content-Length %q for %d bytes", rec.Header().Get("Content-Length"), len(got))
			}
			bodies[i] = got
		}
		if bodies[0] != bodies[1] {
			t.Fatalf("buffered %q != streamed %q", bodies[0], bodies[1])
		}
	})
}

// TestMiddleware_FrameRequestsUntouched: a document requested for a frame
// (Sec-Fetch-Dest iframe and kin, as Chromium sends) passes through byte for
// byte without asking for a snippet; top-level documents, fetches and
// requests without the header are injected and say Vary: Sec-Fetch-Dest.
func TestMiddleware_FrameRequestsUntouched(t *testing.T) {
	page := "<!doctype html><body>x</body>"
	for _, tt := range []struct {
		dest   string
		inject bool
	}{
		{"", true}, {"document", true}, {"empty", true},
		{"iframe", false}, {"frame", false}, {"embed", false}, {"object", false}, {"fencedframe", false},
	} {
		t.Run(tt.dest, func(t *testing.T) {
			calls := 0
			m := &inject.Middleware{Snippet: func(http.ResponseWriter, *http.Request) []byte {
				calls++
				return []byte(snip)
			}}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/", nil)
			if tt.dest != "" {
				req.Header.Set("Sec-Fetch-Dest", tt.dest)
			}
			m.Handler(htmlHandler("text/html", 0, page)).ServeHTTP(rec, req)
			injected := strings.Contains(rec.Body.String(), snip)
			if injected != tt.inject || (calls == 1) != tt.inject {
				t.Fatalf("injected %v after %d snippet calls, want %v: %q", injected, calls, tt.inject, rec.Body.String())
			}
			if got := inject.FrameRequest(req); got == tt.inject {
				t.Errorf("FrameRequest = %v", got)
			}
			if tt.inject && rec.Header().Get("Vary") != "Sec-Fetch-Dest" {
				t.Errorf("injected page without Vary: %v", rec.Header())
			}
			if !tt.inject && (rec.Body.String() != page || rec.Header().Get("ETag") == "" || rec.Header().Get("Vary") != "") {
				t.Errorf("frame page changed: %q %v", rec.Body.String(), rec.Header())
			}
		})
	}
}
