package live

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/platform"
)

// Error is a refused request in the endpoint's own terms. Code is stable
// (one of the Code* constants or an envelope Reason*); the other fields
// are the context some answers carry. [errorTable] maps the code to the
// HTTP status and body (reference §1.4, §2); the handlers never choose
// either themselves. The code is also the rejection log's reason.
type Error struct {
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

func (e *Error) Error() string {
	s := "live: " + e.Code
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Codes of [Error] beyond the envelope Reason* codes.
const (
	CodeNotFound           = "not found"
	CodeBadRequest         = "bad request"
	CodeBadBody            = "bad body"
	CodeMethodNotAllowed   = "method not allowed"
	CodeUnauthorized       = "unauthorized"
	CodeWrongCredential    = "wrong_credential"
	CodeOrigin             = "origin"
	CodeBrowserOrigin      = "browser_origin"
	CodeMissingSession     = "missing X-Riffrec-Session"
	CodeActiveSession      = "active_session_id"
	CodeDraining           = "previous_session_draining"
	CodeSessionEnded       = "session-ended"
	CodeEndInProgress      = "session_end_in_progress"
	CodeWaitTaken          = "wait-taken"
	CodeTooLarge           = "too large"
	CodeDiskCap            = "disk_cap"
	CodeClosing            = "closing"
	CodeStorageFailed      = "storage_failed"
	CodeStorageUnavailable = "storage_unavailable" // sticky: answered 503 storage_failed
	CodeArchiveWriteFailed = "archive_write_failed"
	CodeUnknownCheckpoint  = "unknown checkpoint"
	CodeUnknownUnit        = "unknown unit"
	CodeUnitWithdrawn      = "unit withdrawn"
	CodeBadStatus          = "bad status"
	CodeQuestionRequired   = "question is required"
	CodeMintSessionID      = "session_id must match X-Riffrec-Session"
	CodeTLSRequired        = "tls_required"
	CodeNoKey              = "no_key"
	CodeBriefUnreadable    = "brief_unreadable"
	CodeBriefSecret        = "brief_contains_secret"
	CodeRateLimited        = "rate_limited"
	CodeOpenAIError        = "openai_error"
)

// answer is one row of the table: the status and how the body is built.
type answer struct {
	status int
	body   func(*Error) any
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

func errorKey(e *Error) any  { return errBody{e.Code} }
func reasonKey(e *Error) any { return reasonBody{e.Code} }
func statusKey(e *Error) any { return statusBody{e.Code} }
func detailKey(e *Error) any { return errBody{e.Detail} }

func envelopeBody(e *Error) any {
	return struct {
		Reason string `json:"reason"`
		Seq    *int64 `json:"seq"`
		Detail string `json:"detail,omitempty"`
	}{e.Code, e.Seq, e.Detail}
}

// storageBody is {"error":"storage_failed"} plus, on routes that name what
// failed, the errno code and that name.
func storageBody(e *Error) any {
	code := errnoCode(e.Err)
	switch {
	case e.AckedSeq != nil:
		return struct {
			Error    string `json:"error"`
			Code     any    `json:"code"`
			AckedSeq int64  `json:"acked_seq"`
		}{CodeStorageFailed, code, *e.AckedSeq}
	case e.CheckpointID != "":
		return struct {
			Error        string `json:"error"`
			Code         any    `json:"code"`
			CheckpointID string `json:"checkpoint_id"`
		}{CodeStorageFailed, code, e.CheckpointID}
	case e.UnitID != "":
		return struct {
			Error  string `json:"error"`
			Code   any    `json:"code"`
			UnitID string `json:"unit_id"`
		}{CodeStorageFailed, code, e.UnitID}
	}
	return errBody{CodeStorageFailed}
}

func tooLargeBody(e *Error) any {
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

// errorTable is the one place that maps an [Error] code to its answer.
// Codes not listed are envelope rejections (400 {"reason","seq"}).
var errorTable = map[string]answer{
	CodeNotFound:         {http.StatusNotFound, errorKey},
	CodeBadRequest:       {http.StatusBadRequest, errorKey},
	CodeBadBody:          {http.StatusBadRequest, detailKey},
	CodeMethodNotAllowed: {http.StatusMethodNotAllowed, errorKey},
	CodeUnauthorized:     {http.StatusUnauthorized, errorKey},
	CodeWrongCredential:  {http.StatusForbidden, reasonKey},
	CodeOrigin:           {http.StatusForbidden, reasonKey},
	CodeBrowserOrigin:    {http.StatusForbidden, reasonKey},
	CodeMissingSession:   {http.StatusBadRequest, errorKey},
	CodeActiveSession: {http.StatusConflict, func(e *Error) any {
		return struct {
			ActiveSessionID string `json:"active_session_id"`
		}{e.SessionID}
	}},
	CodeDraining:      {http.StatusConflict, errorKey},
	CodeSessionEnded:  {http.StatusGone, statusKey},
	CodeEndInProgress: {http.StatusConflict, errorKey},
	CodeWaitTaken:     {http.StatusConflict, statusKey},
	CodeTooLarge:      {http.StatusRequestEntityTooLarge, tooLargeBody},
	CodeDiskCap: {http.StatusInsufficientStorage, func(e *Error) any {
		return struct {
			Reason      string `json:"reason"`
			StreamState string `json:"stream_state"`
			MaxBytes    int64  `json:"max_bytes"`
			AckedSeq    int64  `json:"acked_seq"`
		}{CodeDiskCap, "buffering", e.MaxBytes, *e.AckedSeq}
	}},
	CodeClosing:            {http.StatusServiceUnavailable, errorKey},
	CodeStorageFailed:      {http.StatusInternalServerError, storageBody},
	CodeStorageUnavailable: {http.StatusServiceUnavailable, func(*Error) any { return errBody{CodeStorageFailed} }},
	CodeArchiveWriteFailed: {http.StatusInternalServerError, func(e *Error) any {
		if e.Err == nil {
			return errBody{CodeArchiveWriteFailed}
		}
		return struct {
			Error string `json:"error"`
			Code  any    `json:"code"`
		}{CodeArchiveWriteFailed, errnoCode(e.Err)}
	}},
	CodeUnknownCheckpoint: {http.StatusNotFound, errorKey},
	CodeUnknownUnit:       {http.StatusNotFound, errorKey},
	CodeUnitWithdrawn: {http.StatusConflict, func(e *Error) any {
		return struct {
			Error  string `json:"error"`
			UnitID string `json:"unit_id"`
			Status string `json:"status"`
		}{CodeUnitWithdrawn, e.UnitID, StatusWithdrawn}
	}},
	CodeBadStatus: {http.StatusBadRequest, func(*Error) any {
		return errBody{"status must be one of " + strings.Join(agentStatuses, ", ")}
	}},
	CodeQuestionRequired: {http.StatusBadRequest, errorKey},
	ReasonUnsupportedSchema: {http.StatusConflict, func(*Error) any {
		return struct {
			Expected string `json:"expected_schema_version"`
		}{SchemaVersion}
	}},
	CodeMintSessionID:   {http.StatusBadRequest, errorKey},
	CodeTLSRequired:     {http.StatusForbidden, reasonKey},
	CodeNoKey:           {http.StatusServiceUnavailable, reasonKey},
	CodeBriefUnreadable: {http.StatusInternalServerError, errorKey},
	CodeBriefSecret:     {http.StatusServiceUnavailable, reasonKey},
	CodeRateLimited: {http.StatusTooManyRequests, func(e *Error) any {
		return struct {
			RetryAfter int `json:"retry_after"`
		}{e.RetryAfter}
	}},
	CodeOpenAIError: {http.StatusBadGateway, func(e *Error) any {
		us := jsontext.Value("null")
		if e.UpstreamStatus != 0 {
			us = jsontext.Value(strconv.Itoa(e.UpstreamStatus))
		}
		return struct {
			Reason         string         `json:"reason"`
			UpstreamStatus jsontext.Value `json:"upstream_status"`
		}{CodeOpenAIError, us}
	}},
}

// answerFor looks up the table; codes it does not list are envelope
// rejections.
func answerFor(e *Error) (int, any) {
	if a, ok := errorTable[e.Code]; ok {
		return a.status, a.body(e)
	}
	return http.StatusBadRequest, envelopeBody(e)
}

// StatusOf returns the HTTP status err is answered with: the table's for
// an *Error, 500 for anything else.
func StatusOf(err error) int {
	var le *Error
	if errors.As(err, &le) {
		s, _ := answerFor(le)
		return s
	}
	return http.StatusInternalServerError
}

// storageError is a storage failure the endpoint cannot roll back (see
// [Endpoint.failLocked]).
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
