package taskbar

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/taskbar/contract"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// DefaultMountBase is where the API lives unless Options say otherwise.
const DefaultMountBase = "/dev/pi-browser-taskbar"

// Stable error codes beyond the contract package's (seed 000 table;
// not_found is Phoenix's catch-all).
const (
	CodeForbidden            = "forbidden"
	CodeInvalidCSRF          = "invalid_csrf"
	CodeBusy                 = "busy"
	CodeTaskNotFound         = "task_not_found"
	CodeTaskNotCancellable   = "task_not_cancellable"
	CodeResetWhileBusy       = "reset_while_busy"
	CodeSessionResetRejected = "session_reset_rejected"
	CodeUnavailable          = "unavailable"
	CodeNotFound             = "not_found"
)

// Fixed error messages.
var errorMessages = map[string]string{
	CodeForbidden:                 "Pi Browser Taskbar is not allowed from this host or client address",
	CodeInvalidCSRF:               "The session CSRF token is invalid",
	CodeBusy:                      "Another Pi task is active",
	CodeTaskNotFound:              "Task was not found",
	CodeTaskNotCancellable:        "Task can no longer be stopped",
	CodeResetWhileBusy:            "A fresh session cannot start while Pi is busy",
	CodeSessionResetRejected:      "Pi kept the current session",
	CodeUnavailable:               "Pi is not ready",
	CodeNotFound:                  "Taskbar route was not found",
	contract.CodeInvalidTask:      contract.MessageInvalidTask,
	contract.CodeMalformedJSON:    contract.MessageMalformedJSON,
	contract.CodeOversizedPayload: contract.MessageOversizedPayload,
}

// Options configure a [Handler]. The zero value serves below
// [DefaultMountBase] with no remote hosts, no assets and contract parsing.
type Options struct {
	// MountBase is the path prefix of every route, "/seg[/seg…]" without a
	// final slash; "" means DefaultMountBase. A malformed base panics.
	MountBase string
	// AllowedHosts is the resolved allowed_hosts setting ([Settings]).
	AllowedHosts []string
	// Assets serves GET <base>/assets/{file} from its root (the Browser
	// Client's pi_browser_taskbar.js and .css); nil serves none.
	Assets fs.FS
	// Logger gets one record per request with the route, status and code
	// only; nil discards.
	Logger *slog.Logger
	// ParseTask validates and normalizes a POST /tasks body; nil means
	// [contract.ParseTask]. Errors that are a *contract.Error keep their
	// code; any other error is invalid_task.
	ParseTask func(body []byte) (*contract.Task, error)
}

// Handler serves the taskbar HTTP API below a mount base (seed 000
// "Shared HTTP API and stable errors"):
//
//	GET    <base>/state           200 snapshot
//	POST   <base>/tasks           202 snapshot | 400 | 413 | 422 | 409 busy | 503
//	DELETE <base>/tasks/{id}      202 | 200 | 404 task_not_found | 409 task_not_cancellable | 503
//	POST   <base>/session/reset   202 | 409 reset_while_busy | 409 session_reset_rejected | 503
//	GET    <base>/assets/{file}   200 asset
//
// Every request passes the access check (403 forbidden); every mutation
// passes the CSRF check (422 invalid_csrf). Errors are
// {"error":{"code","message"},"snapshot"?}; every response carries
// Cache-Control: no-store and no CORS headers. Safe for concurrent use.
type Handler struct {
	owner  Owner
	base   string
	access *loopback.HostGuard
	csrf   *loopback.CSRF
	assets fs.FS
	log    *slog.Logger
	parse  func([]byte) (*contract.Task, error)
	mux    *http.ServeMux
}

var mountPattern = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)

// NewHandler returns a handler over owner. opts may be nil.
func NewHandler(owner Owner, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MountBase == "" {
		o.MountBase = DefaultMountBase
	}
	if !mountPattern.MatchString(o.MountBase) || path.Clean(o.MountBase) != o.MountBase {
		panic("taskbar: invalid mount base " + o.MountBase)
	}
	if owner == nil {
		panic("taskbar: nil Owner")
	}
	h := &Handler{
		owner:  owner,
		base:   o.MountBase,
		access: newHostGuard(o.AllowedHosts),
		csrf:   loopback.NewCSRF(CSRFCookieName, CSRFHeader),
		assets: o.Assets,
		log:    o.Logger,
		parse:  o.ParseTask,
		mux:    http.NewServeMux(),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.parse == nil {
		h.parse = contract.ParseTask
	}
	b := h.base
	h.mux.HandleFunc("GET "+b+"/state", h.getState)
	h.mux.Handle("POST "+b+"/tasks", loopback.LimitBody(contract.MaxRequestBytes, h.mutation(h.postTask)))
	h.mux.HandleFunc("DELETE "+b+"/tasks/{id}", h.mutation(h.deleteTask))
	h.mux.HandleFunc("POST "+b+"/session/reset", h.mutation(h.postReset))
	h.mux.HandleFunc("GET "+b+"/assets/{file}", h.getAsset)
	h.mux.HandleFunc(b+"/", h.notFound)
	h.mux.HandleFunc(b, h.notFound)
	return h
}

// MountBase returns the path prefix the handler serves.
func (h *Handler) MountBase() string { return h.base }

// RemoteAccess reports whether allowed_hosts is non-empty: the page
// bootstrap shows it as data-remote-access="true" so the Browser Client
// warns about unencrypted remote HTTP. The host list itself is never
// exposed (seed 000 "Remote development access and diagnostics").
func (h *Handler) RemoteAccess() bool { return h.access.Remote() }

// ServeHTTP checks access, then routes. Requests outside the mount base
// get 404 not_found.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := h.access.Check(r); err != nil {
		status, code := guardStatus(err)
		h.writeError(w, r, status, code, nil)
		return
	}
	if r.URL.Path != h.base && !strings.HasPrefix(r.URL.Path, h.base+"/") {
		h.notFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) mutation(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.csrf.Check(r); err != nil {
			status, code := guardStatus(err)
			h.writeError(w, r, status, code, nil)
			return
		}
		if k := r.Header.Get(IdempotencyKeyHeader); k != "" && len(k) <= runtime.MaxIdempotencyKey {
			r = r.WithContext(runtime.WithIdempotencyKey(r.Context(), k))
		}
		next(w, r)
	}
}

// IdempotencyKeyHeader names the mutation's idempotency key: a resent
// POST /tasks, DELETE /tasks/{id} or POST /session/reset with the same key
// (at most [runtime.MaxIdempotencyKey] bytes) gets the original outcome
// with the current snapshot and acts only once, whichever host process it
// reaches. The request body is unchanged.
const IdempotencyKeyHeader = "Idempotency-Key"

func (h *Handler) getState(w http.ResponseWriter, r *http.Request) {
	snap, err := h.owner.State(r.Context())
	if err != nil {
		h.ownerUnavailable(w, r)
		return
	}
	h.writeJSON(w, r, http.StatusOK, snap, "")
}

func (h *Handler) postTask(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body) // capped at registration

	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.writeError(w, r, http.StatusRequestEntityTooLarge, contract.CodeOversizedPayload, nil)
			return
		}
		h.writeError(w, r, http.StatusBadRequest, contract.CodeMalformedJSON, nil)
		return
	}
	task, err := h.parse(body)
	if err != nil {
		var ce *contract.Error
		if errors.As(err, &ce) {
			h.writeError(w, r, ce.Status, ce.Code, nil)
		} else {
			h.writeError(w, r, http.StatusUnprocessableEntity, contract.CodeInvalidTask, nil)
		}
		return
	}
	res, snap, err := h.owner.Submit(r.Context(), task.Prompt, string(task.Envelope()))
	if err != nil {
		h.ownerUnavailable(w, r)
		return
	}
	h.writeResult(w, r, res, snap)
}

func (h *Handler) deleteTask(w http.ResponseWriter, r *http.Request) {
	res, snap, err := h.owner.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		h.ownerUnavailable(w, r)
		return
	}
	h.writeResult(w, r, res, snap)
}

func (h *Handler) postReset(w http.ResponseWriter, r *http.Request) {
	res, snap, err := h.owner.Reset(r.Context())
	if err != nil {
		h.ownerUnavailable(w, r)
		return
	}
	h.writeResult(w, r, res, snap)
}

var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

func (h *Handler) getAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ctype, known := assetTypes[path.Ext(name)]
	if h.assets == nil || !known || !fs.ValidPath(name) || strings.Contains(name, "/") {
		h.notFound(w, r)
		return
	}
	b, err := fs.ReadFile(h.assets, name)
	if err != nil {
		h.notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	h.logRequest(r, http.StatusOK, "")
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.writeError(w, r, http.StatusNotFound, CodeNotFound, nil)
}

// ownerUnavailable answers when no verified owner responded.
func (h *Handler) ownerUnavailable(w http.ResponseWriter, r *http.Request) {
	snap := runtime.MarshalSnapshot(runtime.UnavailableSnapshot(runtime.BrokerUnavailableMessage))
	h.writeError(w, r, http.StatusServiceUnavailable, CodeUnavailable, snap)
}

// writeResult maps a runtime result to its status and code (seed 000).
func (h *Handler) writeResult(w http.ResponseWriter, r *http.Request, res runtime.Result, snap []byte) {
	switch res {
	case runtime.ResultAccepted:
		h.writeJSON(w, r, http.StatusAccepted, snap, "")
	case runtime.ResultCancelled:
		h.writeJSON(w, r, http.StatusOK, snap, "")
	case runtime.ResultBusy:
		h.writeError(w, r, http.StatusConflict, CodeBusy, snap)
	case runtime.ResultNotFound:
		h.writeError(w, r, http.StatusNotFound, CodeTaskNotFound, snap)
	case runtime.ResultNotCancellable:
		h.writeError(w, r, http.StatusConflict, CodeTaskNotCancellable, snap)
	case runtime.ResultResetWhileBusy:
		h.writeError(w, r, http.StatusConflict, CodeResetWhileBusy, snap)
	case runtime.ResultSessionResetRejected:
		h.writeError(w, r, http.StatusConflict, CodeSessionResetRejected, snap)
	case runtime.ResultInvalid:
		h.writeError(w, r, http.StatusUnprocessableEntity, contract.CodeInvalidTask, nil)
	default:
		h.writeError(w, r, http.StatusServiceUnavailable, CodeUnavailable, snap)
	}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, status int, code string, snap []byte) {
	var e errorBody
	e.Error.Code = code
	e.Error.Message = errorMessages[code]
	e.Snapshot = snap
	b, err := json.Marshal(e)
	if err != nil {
		panic("taskbar: encode error body: " + err.Error()) // snap is runtime JSON: a bug
	}
	h.writeJSON(w, r, status, b, code)
}

func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, status int, body []byte, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	h.logRequest(r, status, code)
}

// logRequest records the route pattern (never the path, body, headers or
// host), the status and the stable code.
func (h *Handler) logRequest(r *http.Request, status int, code string) {
	if !h.log.Enabled(r.Context(), slog.LevelDebug) {
		return
	}
	h.log.Debug("taskbar request", "route", r.Pattern, "status", status, "code", code)
}
