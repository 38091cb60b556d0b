package webdriver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest/webdriver"
	"github.com/pikit-dev/pikit/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// driver is a scripted remote end with one session "s1".
func driver(t *testing.T, hang <-chan struct{}) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"value":{"ready":true,"message":""}}`)
	})
	mux.HandleFunc("POST /session", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != `{"capabilities":{"alwaysMatch":{"browserName":"MiniBrowser"}}}` {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"value":{"error":"invalid argument","message":"bad capabilities","stacktrace":""}}`)
			return
		}
		io.WriteString(w, `{"value":{"sessionId":"s1","capabilities":{}}}`)
	})
	mux.HandleFunc("POST /session/s1/execute/sync", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"value":"42"}`)
	})
	mux.HandleFunc("GET /session/s1/window", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"value":{"error":"no such window","message":"closed","stacktrace":""}}`)
	})
	mux.HandleFunc("POST /session/s1/url", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("DELETE /session/s1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"value":null}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSession(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	base := driver(t, hang)
	ctx := t.Context()
	if !webdriver.Ready(ctx, base) {
		t.Fatal("Ready = false")
	}
	var we *webdriver.Error
	if _, err := webdriver.NewSession(ctx, base, map[string]any{}, nil); !errors.As(err, &we) || we.Code != "invalid argument" || we.Status != 400 {
		t.Fatalf("NewSession with other capabilities = %v, want the driver's invalid argument", err)
	}
	s, err := webdriver.NewSession(ctx, base, map[string]any{"browserName": "MiniBrowser"}, &webdriver.Options{RequestTimeout: 200 * time.Millisecond})
	if err != nil || s.ID != "s1" {
		t.Fatalf("NewSession = %v, %v", s, err)
	}
	var v string
	if err := s.Do(ctx, "POST", "/execute/sync", map[string]any{"script": "return '42'", "args": []any{}}, &v); err != nil || v != "42" {
		t.Fatalf("execute = %q, %v", v, err)
	}
	if err := s.Do(ctx, "GET", "/window", nil, &v); !errors.As(err, &we) || we.Code != "no such window" || we.Status != 404 {
		t.Fatalf("window = %v, want no such window", err)
	}
	// Every request has a timeout, even when the caller's context has none.
	if err := s.Do(context.Background(), "POST", "/url", map[string]string{"url": "about:blank"}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hanging command = %v, want the request timeout", err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}
