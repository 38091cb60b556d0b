package live

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/platform"
)

// liveError is a refused request in the endpoint's own terms. Code is stable
// (one of the code* constants or an envelope reason*); the other fields
// are the context some answers carry. [errorTable] maps the code to the
// HTTP status and body (reference §1.4, §2); the handlers never choose
// either themselves. The code is also the rejection log's reason.
type liveError struct {
	Code string
	// Seq is the envelope's seq when it was an integer (envelope
	// rejections; null otherwise).
	Seq *int64
	// Detail is free text: an envelope rejection's detail, or the message of
	// a code whose body is {"error": Detail}.
	Detail string
	// AckedSeq is the highest contiguous seq (storage_failed on /events,
	// disk_cap).
	AckedSeq *int64
	// CheckpointID, UnitID and SessionID name what the answer is about.
	CheckpointID, UnitID, SessionID string
	// MaxBytes and FrameMaxBytes are the caps a too-large answer reports.
	MaxBytes, FrameMaxBytes int64
	// RetryAfter (seconds) and UpstreamStatus (0: none) are mint answers'.
	RetryAfter, UpstreamStatus int
	// Err is the cause (storage failures): its errno names the body's code.
	Err error
}

func (e *liveError) Error() string {
	s := "live: " + e.Code
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *liveError) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *liveError) Is(target error) bool {
	t, ok := target.(*liveError)
	return ok && t.Code == e.Code
}

// Codes of [liveError] beyond the envelope reason* codes.
const (
	codeNotFound           = "not found"
	codeBadRequest         = "bad request"
	codeBadBody            = "bad body"
	codeMethodNotAllowed   = "method not allowed"
	codeUnauthorized       = "unauthorized"
	codeWrongCredential    = "wrong_credential"
	codeOrigin             = "origin"
	codeBrowserOrigin      = "browser_origin"
	codeMissingSession     = "missing X-Riffrec-Session"
	codeActiveSession      = "active_session_id"
	codeDraining           = "previous_session_draining"
	codeSessionEnded       = "session-ended"
	codeEndInProgress      = "session_end_in_progress"
	codeWaitTaken          = "wait-taken"
	codeTooLarge           = "too large"
	codeDiskCap            = "disk_cap"
	codeClosing            = "closing"
	codeStorageFailed      = "storage_failed"
	codeStorageUnavailable = "storage_unavailable" // sticky: answered 503 storage_failed
	codeArchiveWriteFailed = "archive_write_failed"
	codeUnknownCheckpoint  = "unknown checkpoint"
	codeUnknownUnit        = "unknown unit"
	codeUnitWithdrawn      = "unit withdrawn"
	codeBadStatus          = "bad status"
	codeQuestionRequired   = "question is required"
	codeMintSessionID      = "session_id must match X-Riffrec-Session"
	codeTLSRequired        = "tls_required"
	codeNoKey              = "no_key"
	codeBriefUnreadable    = "brief_unreadable"
	codeBriefSecret        = "brief_contains_secret"
	codeRateLimited        = "rate_limited"
	codeOpenAIError        = "openai_error"
)

// answer is one row of the table: the status and how the body is built.
type answer struct {
	status int
	body   func(*liveError) any
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

func errorKey(e *liveError) any  { return errBody{e.Code} }
func reasonKey(e *liveError) any { return reasonBody{e.Code} }
func statusKey(e *liveError) any { return statusBody{e.Code} }
func detailKey(e *liveError) any { return errBody{e.Detail} }

func envelopeBody(e *liveError) any {
	return struct {
		Reason string `json:"reason"`
		Seq    *int64 `json:"seq"`
		Detail string `json:"detail,omitempty"`
	}{e.Code, e.Seq, e.Detail}
}

// storageBody is {"error":"storage_failed"} plus, on routes that name what
// failed, the errno code and that name.
func storageBody(e *liveError) any {
	code := errnoCode(e.Err)
	switch {
	case e.AckedSeq != nil:
		return struct {
			Error    string `json:"error"`
			Code     any    `json:"code"`
			AckedSeq int64  `json:"acked_seq"`
		}{codeStorageFailed, code, *e.AckedSeq}
	case e.CheckpointID != "":
		return struct {
			Error        string `json:"error"`
			Code         any    `json:"code"`
			CheckpointID string `json:"checkpoint_id"`
		}{codeStorageFailed, code, e.CheckpointID}
	case e.UnitID != "":
		return struct {
			Error  string `json:"error"`
			Code   any    `json:"code"`
			UnitID string `json:"unit_id"`
		}{codeStorageFailed, code, e.UnitID}
	}
	return errBody{codeStorageFailed}
}

func tooLargeBody(e *liveError) any {
	if e.FrameMaxBytes > 0 {
		return struct {
			MaxBytes      int64 `json:"max_bytes"`
			FrameMaxBytes int64 `json:"frame_max_bytes"`
		}{e.MaxBytes, e.FrameMaxBytes}
	}
	return struct {
		MaxBytes int64 `json:"max_bytes"`
	}{e.MaxBytes}
}

// errorTable is the one place that maps a [liveError] code to its answer.
// Codes not listed are envelope rejections (400 {"reason","seq"}).
var errorTable = map[string]answer{
	codeNotFound:         {http.StatusNotFound, errorKey},
	codeBadRequest:       {http.StatusBadRequest, errorKey},
	codeBadBody:          {http.StatusBadRequest, detailKey},
	codeMethodNotAllowed: {http.StatusMethodNotAllowed, errorKey},
	codeUnauthorized:     {http.StatusUnauthorized, errorKey},
	codeWrongCredential:  {http.StatusForbidden, reasonKey},
	codeOrigin:           {http.StatusForbidden, reasonKey},
	codeBrowserOrigin:    {http.StatusForbidden, reasonKey},
	codeMissingSession:   {http.StatusBadRequest, errorKey},
	codeActiveSession: {http.StatusConflict, func(e *liveError) any {
		return struct {
			ActiveSessionID string `json:"active_session_id"`
		}{e.SessionID}
	}},
	codeDraining:      {http.StatusConflict, errorKey},
	codeSessionEnded:  {http.StatusGone, statusKey},
	codeEndInProgress: {http.StatusConflict, errorKey},
	codeWaitTaken:     {http.StatusConflict, statusKey},
	codeTooLarge:      {http.StatusRequestEntityTooLarge, tooLargeBody},
	codeDiskCap: {http.StatusInsufficientStorage, func(e *liveError) any {
		return struct {
			Reason      string `json:"reason"`
			StreamState string `json:"stream_state"`
			MaxBytes    int64  `json:"max_bytes"`
			AckedSeq    int64  `json:"acked_seq"`
		}{codeDiskCap, "buffering", e.MaxBytes, *e.AckedSeq}
	}},
	codeClosing:            {http.StatusServiceUnavailable, errorKey},
	codeStorageFailed:      {http.StatusInternalServerError, storageBody},
	codeStorageUnavailable: {http.StatusServiceUnavailable, func(*liveError) any { return errBody{codeStorageFailed} }},
	codeArchiveWriteFailed: {http.StatusInternalServerError, func(e *liveError) any {
		if e.Err == nil {
			return errBody{codeArchiveWriteFailed}
		}
		return struct {
			Error string `json:"error"`
			Code  any    `json:"code"`
		}{codeArchiveWriteFailed, errnoCode(e.Err)}
	}},
	codeUnknownCheckpoint: {http.StatusNotFound, errorKey},
	codeUnknownUnit:       {http.StatusNotFound, errorKey},
	codeUnitWithdrawn: {http.StatusConflict, func(e *liveError) any {
		return struct {
			Error  string `json:"error"`
			UnitID string `json:"unit_id"`
			Status string `json:"status"`
		}{codeUnitWithdrawn, e.UnitID, statusWithdrawn}
	}},
	codeBadStatus: {http.StatusBadRequest, func(*liveError) any {
		return errBody{"status must be one of " + strings.Join(agentStatuses, ", ")}
	}},
	codeQuestionRequired: {http.StatusBadRequest, errorKey},
	reasonUnsupportedSchema: {http.StatusConflict, func(*liveError) any {
		return struct {
			Expected string `json:"expected_schema_version"`
		}{schemaVersion}
	}},
	codeMintSessionID:   {http.StatusBadRequest, errorKey},
	codeTLSRequired:     {http.StatusForbidden, reasonKey},
	codeNoKey:           {http.StatusServiceUnavailable, reasonKey},
	codeBriefUnreadable: {http.StatusInternalServerError, errorKey},
	codeBriefSecret:     {http.StatusServiceUnavailable, reasonKey},
	codeRateLimited: {http.StatusTooManyRequests, func(e *liveError) any {
		return struct {
			RetryAfter int `json:"retry_after"`
		}{e.RetryAfter}
	}},
	codeOpenAIError: {http.StatusBadGateway, func(e *liveError) any {
		us := jsontext.Value("null")
		if e.UpstreamStatus != 0 {
			us = jsontext.Value(strconv.Itoa(e.UpstreamStatus))
		}
		return struct {
			Reason         string         `json:"reason"`
			UpstreamStatus jsontext.Value `json:"upstream_status"`
		}{codeOpenAIError, us}
	}},
}

// answerFor looks up the table; codes it does not list are envelope
// rejections.
func answerFor(e *liveError) (int, any) {
	if a, ok := errorTable[e.Code]; ok {
		return a.status, a.body(e)
	}
	return http.StatusBadRequest, envelopeBody(e)
}

// statusOf returns the HTTP status err is answered with: the table's for
// an *Error, 500 for anything else.
func statusOf(err error) int {
	var le *liveError
	if errors.As(err, &le) {
		s, _ := answerFor(le)
		return s
	}
	return http.StatusInternalServerError
}

// storageError is a storage failure the endpoint cannot roll back (see
// [endpoint.failLocked]).
type storageError struct{ err error }

func (s *storageError) Error() string { return "live: storage: " + s.err.Error() }
func (s *storageError) Unwrap() error { return s.err }

// errnoCode names the errno behind err ("ENOSPC", …) or is nil; Windows
// error codes map to these names as platform.Code says.
func errnoCode(err error) any {
	switch c := platform.Code(err); c {
	case platform.ENOSPC, platform.EACCES, platform.EROFS, platform.EIO, platform.EDQUOT:
		return c
	}
	return nil
}

func isENOSPC(err error) bool { return platform.Code(err) == platform.ENOSPC }
