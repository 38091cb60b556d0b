package live

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/loopback"
)

// POST /events (reference §2.4). The body is buffered up to maxFrameBody;
// past that the rest is drained unbuffered so the page reads the 413. A
// Content-Length of earlyEventBody or more is answered 413 before reading
// anything; the body is drained after the answer, and past cutEventBody
// (the wrapper's MaxBytesReader) the connection is closed.
func (e *endpoint) handleEvents(w http.ResponseWriter, r *http.Request, sid string) *liveError {
	tooLarge := &liveError{Code: codeTooLarge, MaxBytes: maxEventBody, FrameMaxBytes: maxFrameBody}
	if r.ContentLength >= earlyEventBody {
		rc := http.NewResponseController(w)
		_ = rc.EnableFullDuplex() // read the body after answering
		e.answer(w, r, tooLarge)
		_ = rc.Flush()
		if r.ContentLength <= cutEventBody {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return nil
	}
	body, over, err := readCapped(r.Body, maxFrameBody)
	if over {
		_, err = io.Copy(io.Discard, r.Body)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			return &liveError{Code: codeBadRequest}
		}
		over = true // past cutEventBody: the server closes the connection after the answer
	}
	e.mu.Lock()
	ended := e.board.Ended || e.board.sessionID() != sid
	e.touchLocked()
	e.mu.Unlock()
	if ended {
		return &liveError{Code: codeSessionEnded}
	}
	if over {
		return tooLarge
	}
	acked, err := e.Post(body, sid)
	if err != nil {
		var le *liveError
		if !errors.As(err, &le) {
			le = &liveError{Code: codeStorageFailed, Err: err, AckedSeq: &acked}
		}
		return le
	}
	writeJSON(w, http.StatusOK, ackedBody{acked})
	return nil
}

type ackedBody struct {
	AckedSeq int64 `json:"acked_seq"`
}

// Post runs one /events body through steps 4–9 of reference §2.4: parse,
// size rule, validation of every envelope, disk caps, the durable
// transaction, and the acknowledgement. It returns the highest contiguous
// seq, and an *[liveError] when the body is refused or the transaction failed
// (storage_failed, with the acked seq). It is the request path minus HTTP,
// used by the handler, tests and benchmarks.
func (e *endpoint) Post(body []byte, sid string) (ackedSeq int64, err error) {
	raws, err := splitBody(body)
	if err != nil {
		return 0, &liveError{Code: codeBadBody, Detail: strings.TrimPrefix(err.Error(), "live: ")}
	}
	loneFrame := false
	if len(raws) == 1 {
		if o, ok := parseObj(raws[0]); ok {
			t, _ := o.str("type")
			loneFrame = t == "frame"
		}
	}
	if !loneFrame && len(body) > maxEventBody {
		return 0, &liveError{Code: codeTooLarge, MaxBytes: maxEventBody}
	}
	envs := make([]*envelope, 0, len(raws))
	imageFrame := false
	for _, raw := range raws {
		env, rej := validateEnvelope(raw, sid)
		if rej == nil && env.Type == "frame" && len(raws) > 1 {
			rej = &rejection{Reason: reasonInvalidPayload, Seq: &env.Seq, Detail: "frame envelopes are posted alone"}
		}
		if rej != nil {
			return 0, &liveError{Code: rej.Reason, Seq: rej.Seq, Detail: rej.Detail}
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
		return 0, &liveError{Code: codeClosing}
	}
	if e.failed != nil {
		return 0, &liveError{Code: codeStorageUnavailable, Err: e.failed}
	}
	if e.board.Ended || e.board.sessionID() != sid {
		return 0, &liveError{Code: codeSessionEnded}
	}
	used := e.st.logBytes + e.gapBytes + int64(len(body))
	acked := e.board.AckedSeq
	if imageFrame && used > e.opts.DiskCap {
		return acked, &liveError{Code: codeDiskCap, MaxBytes: e.opts.DiskCap, AckedSeq: &acked}
	}
	if used > e.opts.HardCap {
		return acked, &liveError{Code: codeDiskCap, MaxBytes: e.opts.HardCap, AckedSeq: &acked}
	}
	e.touchLocked()
	res := e.admitLocked(envs)
	e.hub.publish(mkNotice("ack", ackedBody{res.ackedSeq}))
	if res.err != nil {
		e.log.Error("live: event transaction failed", "err", res.err)
		return res.ackedSeq, &liveError{Code: codeStorageFailed, Err: res.err, AckedSeq: &res.ackedSeq}
	}
	return res.ackedSeq, nil
}

// GET /session (reference §2.4): link probe; binds nothing, not activity.
func (e *endpoint) handleSessionProbe(w http.ResponseWriter, r *http.Request, _ string) *liveError {
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
	accepts := b.Ended && b.drained() && !e.endUploading
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		Status            string  `json:"status"`
		SessionID         *string `json:"session_id"`
		AcceptsNewSession bool    `json:"accepts_new_session"`
	}{status, sid, accepts})
	return nil
}

// POST /session/end (reference §2.4).
func (e *endpoint) handleSessionEnd(w http.ResponseWriter, r *http.Request, sid string) *liveError {
	e.mu.Lock()
	if e.endUploading {
		e.mu.Unlock()
		return &liveError{Code: codeEndInProgress}
	}
	e.endUploading = true
	budget := min(e.opts.ArchiveLimit, e.opts.DiskCap-e.st.logBytes-e.gapBytes)
	logDir := e.st.logDir()
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.endUploading = false
		e.mu.Unlock()
	}()
	// An archive upload may take long (reference §2: no request timeout);
	// the read deadline would cut it. Outside a loopback server this is a
	// no-op error.
	_ = loopback.KeepOpen(w)
	ext := "bin"
	switch ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0])); ct {
	case "application/zip":
		ext = "zip"
	case "application/json":
		ext = "json"
	}
	final := filepath.Join(logDir, "archive."+ext)
	n, err := e.receiveArchive(r.Body, final, budget)
	if errors.Is(err, errArchiveTooLarge) {
		return &liveError{Code: codeTooLarge, MaxBytes: max(budget, 0)}
	}
	if errors.Is(err, errArchivePublish) {
		return &liveError{Code: codeArchiveWriteFailed}
	}
	if err != nil {
		return &liveError{Code: codeArchiveWriteFailed, Err: err}
	}
	var archiveName jsontext.Value = jsontext.Value("null")
	if n > 0 {
		archiveName, _ = json.Marshal("archive." + ext)
	} else {
		final = ""
	}
	e.mu.Lock()
	if e.board.Ended || e.board.sessionID() != sid {
		e.mu.Unlock()
		return &liveError{Code: codeSessionEnded}
	}
	prev := e.board.clone()
	produced := &effects{}
	if !e.board.FinalEmitted && (e.board.held() || len(e.board.backlog()) > 0) {
		e.board.FinalEmitted = true
		e.board.release("ck-final-"+newUUID(), kindFinal, e.board.Mode, 0, true, true, produced)
	} else if e.board.held() {
		e.board.release("ck-late-"+newUUID(), kindSend, e.board.Mode, 0, false, false, produced)
	}
	var werr error
	for _, bt := range produced.batches {
		if werr = e.st.writeBatch(bt); werr != nil {
			break
		}
	}
	if werr == nil {
		werr = e.endSessionLocked()
	}
	if werr != nil {
		for _, bt := range produced.batches {
			_ = e.st.removeBatch(bt.env.CheckpointID)
		}
		e.board = prev
		_ = e.saveBoardLocked()
		if final != "" {
			_ = os.Remove(final)
		}
		e.mu.Unlock()
		return &liveError{Code: codeArchiveWriteFailed}
	}
	for _, bt := range produced.batches {
		e.batches[bt.env.CheckpointID] = bt
	}
	e.st.logBytes += n
	e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "session_end", Archive: archiveName, Bytes: &n})
	e.agentQueue.wake()
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		Status       string `json:"status"`
		LogDir       string `json:"log_dir"`
		ArchiveBytes int64  `json:"archive_bytes"`
	}{"session-ended", logDir, n})
	return nil
}

var (
	errArchiveTooLarge = errors.New("live: archive over budget")
	// errArchivePublish is a failure to move the complete archive into
	// place (rename, directory fsync); its answer carries no errno code.
	errArchivePublish = errors.New("live: publish archive")
)

// receiveArchive streams body to final through a [durable.Writer]: a body
// of more than budget bytes is drained (at most 16 MiB more) and refused
// with errArchiveTooLarge; an empty body writes nothing. final is in place,
// durably, only when it returns n > 0 and no error.
func (e *endpoint) receiveArchive(body io.Reader, final string, budget int64) (n int64, err error) {
	f, err := durable.Create(final, 0o600)
	if err != nil {
		return 0, fmt.Errorf("create archive: %w", err)
	}
	defer f.Abort() // no-op once committed
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
	if n == 0 {
		return 0, nil
	}
	if err := f.Commit(); err != nil {
		if de := (*durable.Error)(nil); errors.As(err, &de) && de.Op != "fsync" {
			return n, fmt.Errorf("%w: %w", errArchivePublish, err)
		}
		return n, fmt.Errorf("fsync archive: %w", err)
	}
	return n, nil
}

// readCapped reads at most limit bytes; over reports whether more followed.
func readCapped(r io.Reader, limit int64) (data []byte, over bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, err
}
