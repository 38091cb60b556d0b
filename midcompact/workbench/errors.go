package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/midcompact"
)

// apiError is a refusal with its status and the exact body text.
type apiError struct {
	status int
	text   string
}

func (e *apiError) Error() string { return e.text }

// Texts of the routes (reference §5.6; own wording where the package doc
// says so).
var (
	errNotFound        = &apiError{http.StatusNotFound, "not found"}
	errNoAccess        = &apiError{http.StatusForbidden, "Open the workbench with the URL Pi printed. If it was closed, run /midcompact:review-webui or /midcompact:select-webui again."}
	errRevoked         = &apiError{http.StatusGone, "The midcompact workbench is closed. Open a new one with /midcompact:review-webui or /midcompact:select-webui."}
	errSelectionView   = &apiError{http.StatusConflict, "Selection is not available in this view."}
	errEditView        = &apiError{http.StatusConflict, "Summary and topic editing belong to Review."}
	errSelectionShape  = &apiError{http.StatusBadRequest, "Selection requires spans and keepRefs arrays."}
	errEmptySummary    = &apiError{http.StatusBadRequest, "summary must not be empty"}
	errValueType       = &apiError{http.StatusBadRequest, "value must be a string."}
	errBodyNotObject   = &apiError{http.StatusBadRequest, "Request body must be a JSON object."}
	errBodyTooLarge    = &apiError{http.StatusRequestEntityTooLarge, "Request body too large."}
	errHostNotAllowed  = &apiError{http.StatusForbidden, "Host not allowed."}
	errCrossOriginPost = &apiError{http.StatusForbidden, "Cross-origin request refused."}
)

// statusTable maps the errors of other layers; everything else is a 400
// with the error's text (reference §5.6: exceptions → 400 {error}).
var statusTable = []struct {
	is  error
	api *apiError
}{
	{loopback.ErrHost, errHostNotAllowed},
	{loopback.ErrPeer, errHostNotAllowed},
	{loopback.ErrCrossOrigin, errCrossOriginPost},
	{context.Canceled, errRevoked}, // a forced close cancelled the Plan call
}

// httpError is the one error → status/body mapping of the package.
func httpError(err error) (int, string) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.text
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return errBodyTooLarge.status, errBodyTooLarge.text
	}
	for _, e := range statusTable {
		if errors.Is(err, e.is) {
			return e.api.status, e.api.text
		}
	}
	return http.StatusBadRequest, err.Error()
}

func writeError(rw http.ResponseWriter, err error) {
	status, text := httpError(err)
	writeJSON(rw, status, map[string]string{"error": text})
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	rw.Header().Set("Content-Type", "application/json; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = rw.Write(b)
}

func isUnknownRange(err error) bool { return errors.Is(err, midcompact.ErrUnknownRange) }
