package live

import (
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/loopback"
)

// pageHandler serves a page route after the checks of [endpoint.pageRoute];
// sid is the request's X-Riffrec-Session. A returned *Error is answered
// through [errorTable]; nil means the handler answered.
type pageHandler func(w http.ResponseWriter, r *http.Request, sid string) *liveError

// agentHandler serves an agent route after [endpoint.agentRoute]'s checks.
type agentHandler func(w http.ResponseWriter, r *http.Request) *liveError

// Handler returns the endpoint's HTTP surface (reference §2): page routes
// /events, /stream, /mint, /session/end, /session; agent routes /wait,
// /status, /checkpoints/{id}/ack, /units/{id}/status, /units/{id}/ask.
// Each route's method and body cap are set here. Every other path is 404;
// after a storage failure every route is 503 (see [endpoint.Close]).
func (e *endpoint) Handler() http.Handler {
	mux := http.NewServeMux()
	page := func(method, path string, bind bool, limit int64, h pageHandler) {
		mux.Handle(method+" "+path, e.pageRoute(method, bind, limit, h))
		mux.Handle(path, e.pageRoute(method, bind, limit, nil)) // preflight, other methods
	}
	page("POST", "/events", true, cutEventBody, e.handleEvents) // handleEvents buffers at most maxFrameBody
	page("GET", "/stream", true, maxEventBody, e.handleStream)
	page("POST", "/mint", true, maxEventBody, e.handleMint)
	page("POST", "/session/end", true, e.opts.ArchiveLimit, e.handleSessionEnd)
	page("GET", "/session", false, maxEventBody, e.handleSessionProbe)
	agent := func(method, path string, h agentHandler) {
		mux.Handle(method+" "+path, e.agentRoute(method, h))
		mux.Handle(path, e.agentRoute(method, nil)) // other methods, after the credential
	}
	agent("GET", "/wait", e.handleWait)
	agent("GET", "/status", e.handleStatus)
	agent("POST", "/checkpoints/{id}/ack", e.handleAck)
	agent("POST", "/units/{id}/status", e.handleUnitStatus)
	agent("POST", "/units/{id}/ask", e.handleAsk)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		e.answer(w, r, &liveError{Code: codeNotFound})
	})
	return e.guard(mux)
}

// guard answers before routing: 400 {"error":"bad request"} for a path
// whose percent-decoding is not valid UTF-8 (where upstream's
// decodeURIComponent fails, reference §2), and 503 once storage failed.
// A request line with malformed escapes (GET /%E0%A4%A) never gets here:
// net/http answers it with its own plain-text 400 and closes the
// connection (the documented exception to the JSON bodies).
func (e *endpoint) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !utf8.ValidString(r.URL.Path) {
			e.answer(w, r, &liveError{Code: codeBadRequest})
			return
		}
		e.mu.Lock()
		failed := e.failed
		e.mu.Unlock()
		if failed != nil {
			e.answer(w, r, &liveError{Code: codeStorageUnavailable, Err: failed})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeJSON sends a compact JSON body with a trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v, jsonOut)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"internal"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(data)+1)) // complete even when flushed early
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// answer sends err's status and body from [errorTable] and records the
// rejection in agent.ndjson without headers, bodies, query strings or
// tokens (reference §2.6).
func (e *endpoint) answer(w http.ResponseWriter, r *http.Request, err *liveError) {
	status, body := answerFor(err)
	writeJSON(w, status, body)
	route := r.URL.Path
	if !utf8.ValidString(route) {
		route = r.URL.EscapedPath()
	}
	e.mu.Lock()
	if !e.closed {
		e.logRejectionLocked(r.Method, route, status, err.Code, err.Seq)
	}
	e.mu.Unlock()
}

// credential checks the Bearer token (loopback.BearerToken, compared in
// constant time) against want: missing or wrong is unauthorized, the other
// side's token is wrong_credential.
func credential(r *http.Request, want, other string) *liveError {
	tok, ok := loopback.BearerToken(r)
	switch {
	case !ok:
		return &liveError{Code: codeUnauthorized}
	case loopback.Equal(tok, other):
		return &liveError{Code: codeWrongCredential}
	case !loopback.Equal(tok, want):
		return &liveError{Code: codeUnauthorized}
	}
	return nil
}

// pageRoute wraps a page route: CORS for the app origin only, preflight,
// method before auth, Origin and page token, the body cap, then the
// session binding (reference §2.1–2.3). A nil h serves the preflight and
// answers 405 to any other method.
func (e *endpoint) pageRoute(method string, bind bool, limit int64, h pageHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", e.opts.AppOrigin)
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Riffrec-Session, X-Riffrec-OpenAI-Key")
			hd.Set("Access-Control-Allow-Methods", "GET, POST")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if h == nil || r.Method != method { // a GET pattern also matches HEAD
			hd.Set("Allow", method+", OPTIONS")
			e.answer(w, r, &liveError{Code: codeMethodNotAllowed})
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != e.opts.AppOrigin {
			e.answer(w, r, &liveError{Code: codeOrigin})
			return
		}
		if err := credential(r, e.opts.PageToken, e.opts.AgentToken); err != nil {
			e.answer(w, r, err)
			return
		}
		sid := r.Header.Get("X-Riffrec-Session")
		r.Body = http.MaxBytesReader(w, r.Body, limit+1)
		if bind {
			if err := e.bind(sid); err != nil {
				e.answer(w, r, err)
				return
			}
		}
		if err := h(w, r, sid); err != nil {
			e.answer(w, r, err)
		}
	})
}

// agentRoute wraps an agent route: no Origin at all, the agent token, then
// the method, then the body cap (reference §2.5). A nil h answers 405.
func (e *endpoint) agentRoute(method string, h agentHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, has := r.Header["Origin"]; has {
			e.answer(w, r, &liveError{Code: codeBrowserOrigin})
			return
		}
		if err := credential(r, e.opts.AgentToken, e.opts.PageToken); err != nil {
			e.answer(w, r, err)
			return
		}
		if h == nil || r.Method != method {
			e.answer(w, r, &liveError{Code: codeMethodNotAllowed})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxAgentBody+1)
		if err := h(w, r); err != nil {
			e.answer(w, r, err)
		}
	})
}
