package loopback_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// A local server with the Host guard and a bearer token in front of its
// routes; each refusal is mapped to the caller's own status in one table.
func Example() {
	guard, err := loopback.NewHostGuard(nil) // loopback names only
	if err != nil {
		panic(err)
	}
	agent := &loopback.Bearer{Token: "agent-secret", Others: []string{"page-secret"}}
	mux := http.NewServeMux()
	mux.Handle("POST /status", loopback.LimitBody(1<<10, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})))
	edge := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := guard.Check(r)
		if err == nil {
			err = agent.Check(r)
		}
		switch {
		case err == nil:
			mux.ServeHTTP(w, r)
		case errors.Is(err, loopback.ErrHost), errors.Is(err, loopback.ErrPeer), errors.Is(err, loopback.ErrWrongCredential):
			http.Error(w, `{"reason":"forbidden"}`, http.StatusForbidden)
		default:
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		}
	})
	srv := loopback.New(edge, nil) // 127.0.0.1, a free port, default timeouts
	if err := srv.Start(context.Background()); err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())

	for _, tok := range []string{"agent-secret", "page-secret", "guess"} {
		req, _ := http.NewRequest("POST", "http://"+srv.Addr().String()+"/status", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(tok, resp.StatusCode)
	}
	// Output:
	// agent-secret 200
	// page-secret 403
	// guess 401
}
