package live

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Handler returns the endpoint's HTTP surface (reference §2): page routes
// /events, /stream, /mint, /session/end, /session; agent routes /wait,
// /status, /checkpoints/{id}/ack, /units/{id}/status, /units/{id}/ask.
// Every other path is 404.
func (e *Endpoint) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/events", e.page("POST", true, e.handleEvents))
	mux.HandleFunc("/stream", e.page("GET", true, e.handleStream))
	mux.HandleFunc("/mint", e.page("POST", true, e.handleMint))
	mux.HandleFunc("/session/end", e.page("POST", true, e.handleSessionEnd))
	mux.HandleFunc("/session", e.page("GET", false, e.handleSessionProbe))
	mux.HandleFunc("/wait", e.agent("GET", e.handleWait))
	mux.HandleFunc("/status", e.agent("GET", e.handleStatus))
	mux.HandleFunc("/checkpoints/{id}/ack", e.agent("POST", e.handleAck))
	mux.HandleFunc("/units/{id}/status", e.agent("POST", e.handleUnitStatus))
	mux.HandleFunc("/units/{id}/ask", e.agent("POST", e.handleAsk))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		e.reject(w, r, http.StatusNotFound, errBody{Error: "not found"}, "not found", nil)
	})
	return e.decodablePath(mux)
}

// decodablePath answers 400 {"error":"bad request"} (and logs the
// rejection) for a path whose percent-decoding is not valid UTF-8, where
// upstream's decodeURIComponent fails (reference §2). A request line whose
// escapes are malformed (GET /%E0%A4%A) never reaches a handler: net/http
// answers its own plain-text 400 and closes the connection before routing.
func (e *Endpoint) decodablePath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !utf8.ValidString(r.URL.Path) {
			writeJSON(w, http.StatusBadRequest, errBody{"bad request"})
			e.mu.Lock()
			if !e.closed {
				e.logRejectionLocked(r.Method, r.URL.EscapedPath(), http.StatusBadRequest, "bad request", nil)
			}
			e.mu.Unlock()
			return
		}
		next.ServeHTTP(w, r)
	})
}

type errBody struct {
	Error string `json:"error"`
}
type reasonBody struct {
	Reason string `json:"reason"`
}
type statusBody struct {
	Status string `json:"status"`
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

// reject answers an error and records it in agent.ndjson without headers,
// bodies, query strings or tokens (reference §2.6).
func (e *Endpoint) reject(w http.ResponseWriter, r *http.Request, status int, body any, reason string, seq *int64) {
	writeJSON(w, status, body)
	e.mu.Lock()
	if !e.closed {
		e.logRejectionLocked(r.Method, r.URL.Path, status, reason, seq)
	}
	e.mu.Unlock()
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Values("Authorization")
	if len(h) != 1 {
		return "", false
	}
	tok, ok := strings.CutPrefix(h[0], "Bearer ")
	return tok, ok && tok != ""
}

func eq(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (e *Endpoint) cors(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", e.opts.AppOrigin)
	h.Add("Vary", "Origin")
}

// page wraps a page route: CORS, preflight, method before auth, Origin and
// page token, then the session binding (reference §2.1–2.3).
func (e *Endpoint) page(method string, bind bool, h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e.cors(w)
		if r.Method == http.MethodOptions {
			hd := w.Header()
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Riffrec-Session, X-Riffrec-OpenAI-Key")
			hd.Set("Access-Control-Allow-Methods", "GET, POST")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != method {
			w.Header().Set("Allow", method+", OPTIONS")
			e.reject(w, r, http.StatusMethodNotAllowed, errBody{"method not allowed"}, "method not allowed", nil)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != e.opts.AppOrigin {
			e.reject(w, r, http.StatusForbidden, reasonBody{"origin"}, "origin", nil)
			return
		}
		if !e.credential(w, r, e.opts.PageToken, e.opts.AgentToken) {
			return
		}
		sid := r.Header.Get("X-Riffrec-Session")
		limit := int64(maxEventBody)
		switch r.URL.Path {
		case "/events":
			limit = cutEventBody // handleEvents buffers at most maxFrameBody
		case "/session/end":
			limit = e.opts.ArchiveLimit
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit+1)
		if bind {
			e.mu.Lock()
			status, body, reason := e.bindLocked(sid)
			e.mu.Unlock()
			if status != 0 {
				e.reject(w, r, status, body, reason, nil)
				return
			}
		}
		h(w, r, sid)
	}
}

// bindLocked applies the session binding rules (reference §2.3). A zero
// status means the request may proceed.
func (e *Endpoint) bindLocked(hdr string) (int, any, string) {
	b := e.board
	if b.Ended {
		if hdr == "" || hdr == b.sessionID() {
			return http.StatusGone, statusBody{"session-ended"}, "session-ended"
		}
		if !b.drained() || e.endBusy {
			return http.StatusConflict, errBody{"previous_session_draining"}, "previous_session_draining"
		}
		if err := e.openSessionLocked(hdr); err != nil {
			return http.StatusInternalServerError, errBody{"storage_failed"}, "storage_failed"
		}
		return 0, nil, ""
	}
	if hdr == "" {
		return http.StatusBadRequest, errBody{"missing X-Riffrec-Session"}, "missing X-Riffrec-Session"
	}
	sid := b.sessionID()
	if sid != "" && sid != hdr {
		unloading := b.Page.LastStreamState != nil && *b.Page.LastStreamState == "unloading"
		if len(e.clients) == 0 && !e.endBusy && (unloading || b.Page.Stream == "lost") {
			if err := e.endSessionLocked(); err != nil {
				return http.StatusInternalServerError, errBody{"storage_failed"}, "storage_failed"
			}
			e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "session_closed_by_page", SessionID: sid})
			if !e.board.drained() {
				return http.StatusConflict, errBody{"previous_session_draining"}, "previous_session_draining"
			}
			if err := e.openSessionLocked(hdr); err != nil {
				return http.StatusInternalServerError, errBody{"storage_failed"}, "storage_failed"
			}
			return 0, nil, ""
		}
		return http.StatusConflict, struct {
			ActiveSessionID string `json:"active_session_id"`
		}{sid}, "active_session_id"
	}
	if sid == "" {
		b.SessionID = &hdr
		if err := e.saveBoardLocked(); err != nil {
			b.SessionID = nil
			return http.StatusInternalServerError, errBody{"storage_failed"}, "storage_failed"
		}
	}
	return 0, nil, ""
}

// credential checks the Bearer token against want and rejects the request
// when it is missing or wrong (401), or when it is the other side's token
// (403 wrong_credential). It reports whether the request may go on.
func (e *Endpoint) credential(w http.ResponseWriter, r *http.Request, want, other string) bool {
	tok, ok := bearer(r)
	switch {
	case !ok:
		e.reject(w, r, http.StatusUnauthorized, errBody{"unauthorized"}, "unauthorized", nil)
	case eq(tok, other):
		e.reject(w, r, http.StatusForbidden, reasonBody{"wrong_credential"}, "wrong_credential", nil)
	case !eq(tok, want):
		e.reject(w, r, http.StatusUnauthorized, errBody{"unauthorized"}, "unauthorized", nil)
	default:
		return true
	}
	return false
}

// agent wraps an agent route: no Origin at all, agent token, then method.
func (e *Endpoint) agent(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, has := r.Header["Origin"]; has {
			e.reject(w, r, http.StatusForbidden, reasonBody{"browser_origin"}, "browser_origin", nil)
			return
		}
		if !e.credential(w, r, e.opts.AgentToken, e.opts.PageToken) {
			return
		}
		if r.Method != method {
			e.reject(w, r, http.StatusMethodNotAllowed, errBody{"method not allowed"}, "method not allowed", nil)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxAgentBody+1)
		h(w, r)
	}
}

// tooLargeBody is the 413 answer to a body over the frame cap.
type tooLargeBody struct {
	MaxBytes      int `json:"max_bytes"`
	FrameMaxBytes int `json:"frame_max_bytes"`
}

// POST /events (reference §2.4). The body is buffered up to maxFrameBody;
// past that the rest is drained unbuffered so the page reads the 413. A
// Content-Length of earlyEventBody or more is answered 413 before reading
// anything; the body is drained after the answer, and past cutEventBody
// (the wrapper's MaxBytesReader) the connection is closed.
func (e *Endpoint) handleEvents(w http.ResponseWriter, r *http.Request, sid string) {
	if r.ContentLength >= earlyEventBody {
		rc := http.NewResponseController(w)
		_ = rc.EnableFullDuplex() // read the body after answering
		e.reject(w, r, http.StatusRequestEntityTooLarge, tooLargeBody{maxEventBody, maxFrameBody}, "too large", nil)
		_ = rc.Flush()
		if r.ContentLength <= cutEventBody {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return
	}
	body, over, err := readCapped(r.Body, maxFrameBody)
	if over {
		_, err = io.Copy(io.Discard, r.Body)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			e.reject(w, r, http.StatusBadRequest, errBody{"bad request"}, "bad request", nil)
			return
		}
		over = true // past cutEventBody: the server closes the connection after the answer
	}
	e.mu.Lock()
	ended := e.board.Ended || e.board.sessionID() != sid
	e.touchLocked()
	e.mu.Unlock()
	if ended {
		e.reject(w, r, http.StatusGone, statusBody{"session-ended"}, "session-ended", nil)
		return
	}
	if over {
		e.reject(w, r, http.StatusRequestEntityTooLarge, tooLargeBody{maxEventBody, maxFrameBody}, "too large", nil)
		return
	}
	res := e.Post(body, sid)
	if res.Status != http.StatusOK {
		e.reject(w, r, res.Status, res.Body, res.Reason, res.Seq)
		return
	}
	writeJSON(w, http.StatusOK, res.Body)
}

// PostResult is the answer to one /events body.
type PostResult struct {
	Status int
	Body   any
	Reason string
	Seq    *int64
}

type ackedBody struct {
	AckedSeq int64 `json:"acked_seq"`
}

// Post runs one /events body through steps 4–9 of reference §2.4: parse,
// size rule, validation of every envelope, disk caps, the durable
// transaction, and the acknowledgement. It is the request path minus HTTP,
// used by the handler, tests and benchmarks.
func (e *Endpoint) Post(body []byte, sid string) PostResult {
	raws, err := SplitBody(body)
	if err != nil {
		return PostResult{Status: http.StatusBadRequest, Body: errBody{err.Error()[len("live: "):]}, Reason: "bad body"}
	}
	loneFrame := false
	if len(raws) == 1 {
		if o, ok := parseObj(raws[0]); ok {
			t, _ := o.str("type")
			loneFrame = t == "frame"
		}
	}
	if !loneFrame && len(body) > maxEventBody {
		return PostResult{Status: http.StatusRequestEntityTooLarge, Body: struct {
			MaxBytes int `json:"max_bytes"`
		}{maxEventBody}, Reason: "too large"}
	}
	envs := make([]*Envelope, 0, len(raws))
	imageFrame := false
	for _, raw := range raws {
		env, rej := ValidateEnvelope(raw, sid)
		if rej == nil && env.Type == "frame" && len(raws) > 1 {
			rej = &Rejection{Reason: ReasonInvalidPayload, Seq: &env.Seq, Detail: "frame envelopes are posted alone"}
		}
		if rej != nil {
			if rej.Reason == ReasonUnsupportedSchema {
				return PostResult{Status: http.StatusConflict, Body: struct {
					Expected string `json:"expected_schema_version"`
				}{SchemaVersion}, Reason: rej.Reason, Seq: rej.Seq}
			}
			return PostResult{Status: http.StatusBadRequest, Body: struct {
				Reason string `json:"reason"`
				Seq    *int64 `json:"seq"`
				Detail string `json:"detail,omitempty"`
			}{rej.Reason, rej.Seq, rej.Detail}, Reason: rej.Reason, Seq: rej.Seq}
		}
		if env.Type == "frame" {
			p, _ := parseObj(env.Payload)
			imageFrame = !p.has("dropped")
		}
		envs = append(envs, env)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return PostResult{Status: http.StatusServiceUnavailable, Body: errBody{"closing"}, Reason: "closing"}
	}
	if e.board.Ended || e.board.sessionID() != sid {
		return PostResult{Status: http.StatusGone, Body: statusBody{"session-ended"}, Reason: "session-ended"}
	}
	used := e.st.logBytes + e.gapBytes + int64(len(body))
	capErr := func(max int64) PostResult {
		return PostResult{Status: http.StatusInsufficientStorage, Body: struct {
			Reason      string `json:"reason"`
			StreamState string `json:"stream_state"`
			MaxBytes    int64  `json:"max_bytes"`
			AckedSeq    int64  `json:"acked_seq"`
		}{"disk_cap", "buffering", max, e.board.AckedSeq}, Reason: "disk_cap"}
	}
	if imageFrame && used > e.opts.DiskCap {
		return capErr(e.opts.DiskCap)
	}
	if used > e.opts.HardCap {
		return capErr(e.opts.HardCap)
	}
	e.touchLocked()
	res := e.admitLocked(envs)
	e.deliverLocked(mkNotice("ack", ackedBody{res.ackedSeq}))
	if res.err != nil {
		e.log.Error("live: event transaction failed", "err", res.err)
		return PostResult{Status: http.StatusInternalServerError, Body: struct {
			Error    string `json:"error"`
			Code     any    `json:"code"`
			AckedSeq int64  `json:"acked_seq"`
		}{"storage_failed", errnoCode(res.err), res.ackedSeq}, Reason: "storage_failed"}
	}
	return PostResult{Status: http.StatusOK, Body: ackedBody{res.ackedSeq}}
}

// GET /session (reference §2.4): link probe; binds nothing, not activity.
func (e *Endpoint) handleSessionProbe(w http.ResponseWriter, r *http.Request, _ string) {
	e.mu.Lock()
	b := e.board
	status := "live"
	if b.Ended {
		status = "ended"
	}
	var sid *string
	if b.SessionID != nil {
		s := *b.SessionID
		sid = &s
	}
	accepts := b.Ended && b.drained() && !e.endBusy
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		Status            string  `json:"status"`
		SessionID         *string `json:"session_id"`
		AcceptsNewSession bool    `json:"accepts_new_session"`
	}{status, sid, accepts})
}

// POST /session/end (reference §2.4).
func (e *Endpoint) handleSessionEnd(w http.ResponseWriter, r *http.Request, sid string) {
	e.mu.Lock()
	if e.endBusy {
		e.mu.Unlock()
		e.reject(w, r, http.StatusConflict, errBody{"session_end_in_progress"}, "session_end_in_progress", nil)
		return
	}
	e.endBusy = true
	budget := min(e.opts.ArchiveLimit, e.opts.DiskCap-e.st.logBytes-e.gapBytes)
	logDir := e.st.logDir()
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.endBusy = false
		e.mu.Unlock()
	}()
	ext := "bin"
	switch ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0])); ct {
	case "application/zip":
		ext = "zip"
	case "application/json":
		ext = "json"
	}
	part := filepath.Join(logDir, "archive."+ext+"."+newUUID()+".part")
	n, err := e.receiveArchive(r.Body, part, budget)
	if errors.Is(err, errArchiveTooLarge) {
		_ = os.Remove(part)
		e.reject(w, r, http.StatusRequestEntityTooLarge, struct {
			MaxBytes int64 `json:"max_bytes"`
		}{max(budget, 0)}, "too large", nil)
		return
	}
	if err != nil {
		_ = os.Remove(part)
		e.reject(w, r, http.StatusInternalServerError, struct {
			Error string `json:"error"`
			Code  any    `json:"code"`
		}{"archive_write_failed", errnoCode(err)}, "archive_write_failed", nil)
		return
	}
	var archiveName jsontext.Value = jsontext.Value("null")
	final := ""
	if n > 0 {
		final = filepath.Join(logDir, "archive."+ext)
		if err := os.Rename(part, final); err != nil {
			_ = os.Remove(part)
			e.reject(w, r, http.StatusInternalServerError, errBody{"archive_write_failed"}, "archive_write_failed", nil)
			return
		}
		archiveName, _ = json.Marshal("archive." + ext)
	} else {
		_ = os.Remove(part)
	}
	e.mu.Lock()
	if e.board.Ended || e.board.sessionID() != sid {
		e.mu.Unlock()
		e.reject(w, r, http.StatusGone, statusBody{"session-ended"}, "session-ended", nil)
		return
	}
	prev := e.board.clone()
	fx := &effects{}
	if !e.board.FinalEmitted && (e.board.held() || len(e.board.backlog()) > 0) {
		e.board.FinalEmitted = true
		e.board.release("ck-final-"+newUUID(), KindFinal, e.board.Mode, 0, true, true, fx)
	} else if e.board.held() {
		e.board.release("ck-late-"+newUUID(), KindSend, e.board.Mode, 0, false, false, fx)
	}
	var werr error
	for _, bt := range fx.batches {
		if werr = e.st.writeBatch(bt); werr != nil {
			break
		}
	}
	if werr == nil {
		werr = e.endSessionLocked()
	}
	if werr != nil {
		for _, bt := range fx.batches {
			_ = e.st.removeBatch(bt.env.CheckpointID)
		}
		e.board = prev
		_ = e.saveBoardLocked()
		if final != "" {
			_ = os.Remove(final)
		}
		e.mu.Unlock()
		e.reject(w, r, http.StatusInternalServerError, errBody{"archive_write_failed"}, "archive_write_failed", nil)
		return
	}
	for _, bt := range fx.batches {
		e.batches[bt.env.CheckpointID] = bt
	}
	e.st.logBytes += n
	e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "session_end", Archive: archiveName, Bytes: &n})
	e.wakeLocked()
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		Status       string `json:"status"`
		LogDir       string `json:"log_dir"`
		ArchiveBytes int64  `json:"archive_bytes"`
	}{"session-ended", logDir, n})
}

var errArchiveTooLarge = errors.New("live: archive over budget")

func (e *Endpoint) receiveArchive(body io.Reader, part string, budget int64) (int64, error) {
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("create archive: %w", err)
	}
	defer f.Close()
	var n int64
	buf := make([]byte, 64<<10)
	for {
		k, rerr := body.Read(buf)
		if k > 0 {
			n += int64(k)
			if n > budget {
				_, _ = io.Copy(io.Discard, io.LimitReader(body, 16<<20))
				return n, errArchiveTooLarge
			}
			if _, err := f.Write(buf[:k]); err != nil {
				return n, fmt.Errorf("write archive: %w", err)
			}
			e.mu.Lock()
			e.touchLocked()
			e.mu.Unlock()
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, fmt.Errorf("read archive: %w", rerr)
		}
	}
	if err := f.Sync(); err != nil {
		return n, fmt.Errorf("fsync archive: %w", err)
	}
	return n, nil
}

// Agent routes (reference §2.5).

func (e *Endpoint) handleWait(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	if e.waiting {
		e.mu.Unlock()
		e.reject(w, r, http.StatusConflict, statusBody{"wait-taken"}, "wait-taken", nil)
		return
	}
	e.waiting = true
	e.touchLocked()
	timer := time.NewTimer(e.opts.WaitTimeout)
	defer timer.Stop()
	parked := false
	for {
		if bt := e.nextBatchLocked(); bt != nil {
			e.waiting = false
			if !bt.served {
				// Served only orders re-serving; the flusher records it.
				bt.served = true
				bt.fileDirty = true
				e.kickFlushLocked()
			}
			data, err := json.Marshal(bt.env, jsonOut)
			e.setPresenceLocked("working", bt.env.CheckpointID)
			e.mu.Unlock()
			if err != nil {
				writeJSON(w, http.StatusInternalServerError, errBody{"internal"})
				return
			}
			h := w.Header()
			h.Set("Content-Type", "application/json; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			_, _ = w.Write(append(data, '\n'))
			return
		}
		if e.board.Ended {
			e.waiting = false
			e.mu.Unlock()
			e.reject(w, r, http.StatusGone, statusBody{"session-ended"}, "session-ended", nil)
			return
		}
		if !parked {
			parked = true
			e.setPresenceLocked("listening", "")
		}
		ch := e.wake
		e.mu.Unlock()
		select {
		case <-ch:
			e.mu.Lock()
			continue
		case <-timer.C:
		case <-r.Context().Done():
		case <-e.ctx.Done():
		}
		e.mu.Lock()
		e.waiting = false
		e.scheduleAwayLocked()
		e.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
}

type okCheckpoint struct {
	OK           bool   `json:"ok"`
	CheckpointID string `json:"checkpoint_id"`
	AlreadyAcked bool   `json:"already_acked,omitzero"`
}

func (e *Endpoint) handleAck(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	code, body := e.Ack(id)
	if code != http.StatusOK {
		reason := "unknown checkpoint"
		if code != http.StatusNotFound {
			reason = "storage_failed"
		}
		e.reject(w, r, code, body, reason, nil)
		return
	}
	writeJSON(w, code, body)
}

// Ack acknowledges a batch: the ack is journaled in state/ops.ndjson (the
// commit point; board.json follows) before the batch file is deleted, so an
// acknowledged batch is never served again. Repeat acks answer
// already_acked.
func (e *Endpoint) Ack(id string) (int, any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.touchLocked()
	if e.board.acked(id) {
		return http.StatusOK, okCheckpoint{true, id, true}
	}
	bt := e.batches[id]
	if bt == nil {
		return http.StatusNotFound, errBody{"unknown checkpoint"}
	}
	prevPending := append([]BatchRef(nil), e.board.Pending...)
	e.board.removePending(id)
	e.board.AckedCheckpointIDs = append(e.board.AckedCheckpointIDs, id)
	if err := e.commitOpLocked(opLine{Kind: opAck, Ack: id}); err != nil {
		e.board.Pending = prevPending
		e.board.AckedCheckpointIDs = e.board.AckedCheckpointIDs[:len(e.board.AckedCheckpointIDs)-1]
		return http.StatusInternalServerError, struct {
			Error        string `json:"error"`
			Code         any    `json:"code"`
			CheckpointID string `json:"checkpoint_id"`
		}{"storage_failed", errnoCode(err), id}
	}
	delete(e.batches, id)
	if err := e.st.removeBatch(id); err != nil {
		e.log.Warn("live: remove acked batch failed; dropped at next start", "err", err)
	}
	e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "ack", CheckpointID: id})
	return http.StatusOK, okCheckpoint{OK: true, CheckpointID: id}
}

var agentStatuses = []string{StatusTriaging, StatusAccepted, StatusNeedsInfo, StatusWorking, StatusApplied, StatusBlocked, StatusWithdrawn}

type unitStatusRequest struct {
	Status string  `json:"status"`
	Note   *string `json:"note"`
	Guess  *string `json:"guess"`
}

type okUnit struct {
	OK     bool   `json:"ok"`
	UnitID string `json:"unit_id"`
	Status string `json:"status"`
}

func (e *Endpoint) handleUnitStatus(w http.ResponseWriter, r *http.Request) {
	var req unitStatusRequest
	body, over, _ := readCapped(r.Body, maxAgentBody)
	valid := !over && json.Unmarshal(body, &req, jsonIn) == nil
	if valid {
		valid = false
		for _, s := range agentStatuses {
			valid = valid || req.Status == s
		}
	}
	if !valid {
		e.reject(w, r, http.StatusBadRequest, errBody{"status must be one of " + strings.Join(agentStatuses, ", ")}, "bad status", nil)
		return
	}
	e.unitOp(w, r, func(u *Unit) []notice {
		u.Status = req.Status
		if req.Note != nil {
			u.Note = *req.Note
		}
		if req.Guess != nil {
			u.Guess = *req.Guess
		}
		n := []notice{mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess})}
		if req.Status == StatusApplied {
			var cp jsontext.Value = jsontext.Value("null")
			if u.CheckpointID != nil {
				cp, _ = json.Marshal(*u.CheckpointID)
			}
			n = append(n, mkNotice("applied", struct {
				CheckpointID jsontext.Value `json:"checkpoint_id"`
				UnitIDs      []string       `json:"unit_ids"`
			}{cp, []string{u.ID}}))
		}
		return n
	}, auditLine{Kind: "unit_status", Status: req.Status, Note: deref(req.Note), Guess: deref(req.Guess)}, req.Status == StatusApplied)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (e *Endpoint) handleAsk(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Question string `json:"question"`
	}
	body, over, _ := readCapped(r.Body, maxAgentBody)
	if over || json.Unmarshal(body, &req, jsonIn) != nil || strings.TrimSpace(req.Question) == "" {
		e.reject(w, r, http.StatusBadRequest, errBody{"question is required"}, "question is required", nil)
		return
	}
	e.unitOp(w, r, func(u *Unit) []notice {
		u.Status = StatusNeedsInfo
		u.Question = req.Question
		return []notice{
			mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: StatusNeedsInfo, Note: u.Note, Guess: u.Guess}),
			mkNotice("ask", askNotice{UnitID: u.ID, Question: req.Question}),
		}
	}, auditLine{Kind: "ask", Question: req.Question}, false)
}

// unitOp runs one agent unit post as a transaction with its journal line
// as the commit point; notices go out only after the commit.
func (e *Endpoint) unitOp(w http.ResponseWriter, r *http.Request, f func(*Unit) []notice, audit auditLine, applied bool) {
	id := r.PathValue("id")
	e.mu.Lock()
	e.touchLocked()
	u := e.board.Units[id]
	if u == nil {
		e.mu.Unlock()
		e.reject(w, r, http.StatusNotFound, errBody{"unknown unit"}, "unknown unit", nil)
		return
	}
	if u.Status == StatusWithdrawn {
		e.mu.Unlock()
		e.reject(w, r, http.StatusConflict, struct {
			Error  string `json:"error"`
			UnitID string `json:"unit_id"`
			Status string `json:"status"`
		}{"unit withdrawn", id, StatusWithdrawn}, "unit withdrawn", nil)
		return
	}
	saved := *u
	notices := f(u)
	watch := e.board.WatchForLoss
	if applied {
		e.board.WatchForLoss = true
	}
	op := opLine{Kind: opUnit, Unit: &opUnitState{ID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess, Question: u.Question, Watch: applied}}
	if err := e.commitOpLocked(op); err != nil {
		*u = saved
		e.board.WatchForLoss = watch
		e.mu.Unlock()
		e.reject(w, r, http.StatusInternalServerError, struct {
			Error  string `json:"error"`
			Code   any    `json:"code"`
			UnitID string `json:"unit_id"`
		}{"storage_failed", errnoCode(err), id}, "storage_failed", nil)
		return
	}
	if applied {
		e.armWatchLocked()
	}
	for _, n := range notices {
		e.deliverLocked(n)
	}
	audit.T, audit.UnitID = time.Now().UnixMilli(), id
	e.st.appendAgentLog(audit)
	status := u.Status
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, okUnit{true, id, status})
}

// StatusSummary is the board summary of GET /status (reference §4.3).
type StatusSummary struct {
	SchemaVersion string    `json:"schema_version"`
	SessionID     *string   `json:"session_id"`
	Ended         bool      `json:"ended"`
	Mode          string    `json:"mode"`
	Page          PageState `json:"page"`
	AckedSeq      int64     `json:"acked_seq"`
	Units         struct {
		Total    int            `json:"total"`
		ByStatus map[string]int `json:"by_status"`
		List     []StatusUnit   `json:"list"`
	} `json:"units"`
	Annotations     int   `json:"annotations"`
	Answers         int   `json:"answers"`
	TranscriptCount int64 `json:"transcript_count"`
	FrameCount      int64 `json:"frame_count"`
	Checkpoints     int   `json:"checkpoints"`
	Batches         struct {
		Unserved int `json:"unserved"`
		Unacked  int `json:"unacked"`
	} `json:"batches"`
	PageLostPending bool  `json:"page_lost_pending"`
	LogBytes        int64 `json:"log_bytes"`
}

// StatusUnit is one entry of the summary's unit list.
type StatusUnit struct {
	ID        string         `json:"id"`
	Statement jsontext.Value `json:"statement,omitzero"`
	Status    string         `json:"status"`
	Confirmed jsontext.Value `json:"confirmed"`
	Anchors   jsontext.Value `json:"anchors,omitzero"`
	Evidence  jsontext.Value `json:"evidence,omitzero"`
	Note      string         `json:"note,omitempty"`
	Guess     string         `json:"guess,omitempty"`
	Question  string         `json:"question,omitempty"`
}

func summarize(b *Board, batches map[string]*batch, logBytes int64) StatusSummary {
	var s StatusSummary
	s.SchemaVersion, s.SessionID, s.Ended, s.Mode, s.Page, s.AckedSeq = SchemaVersion, b.SessionID, b.Ended, b.Mode, b.Page, b.AckedSeq
	s.Units.ByStatus = map[string]int{}
	s.Units.List = []StatusUnit{}
	for _, id := range b.UnitOrder {
		u := b.Units[id]
		s.Units.Total++
		s.Units.ByStatus[u.Status]++
		c := u.Fields["confirmed"]
		if len(c) == 0 {
			c = jsontext.Value("null")
		}
		s.Units.List = append(s.Units.List, StatusUnit{ID: id, Statement: u.Fields["statement"], Status: u.Status, Confirmed: c,
			Anchors: u.Fields["anchors"], Evidence: u.Fields["evidence"], Note: u.Note, Guess: u.Guess, Question: u.Question})
	}
	s.Annotations, s.Answers = len(b.AnnotationOrder), len(b.Answers)
	s.TranscriptCount, s.FrameCount, s.Checkpoints = b.TranscriptCount, b.FrameCount, len(b.Checkpoints)
	for _, ref := range b.Pending {
		if bt := batches[ref.CheckpointID]; bt != nil && bt.served {
			s.Batches.Unacked++
		} else {
			s.Batches.Unserved++
		}
	}
	s.PageLostPending = b.PageLostPending
	s.LogBytes = logBytes
	return s
}

func (e *Endpoint) handleStatus(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	s := summarize(e.board, e.batches, e.st.logBytes)
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, s)
}
