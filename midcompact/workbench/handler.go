package workbench

import (
	"context"
	"embed"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pikit-dev/pikit/internal/jstext"
	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/midcompact"
)

//go:embed assets/page.html assets/page.js assets/page.css
var assets embed.FS

// stateMarker is the page's injection point (seed 001: renaming it breaks
// state loading).
const stateMarker = "<!--MIDCOMPACT_STATE-->"

// maxBody caps a POST body (a summary edit is the largest).
const maxBody = 1 << 20

const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func mustAsset(name string) []byte {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err)
	}
	return b
}

var (
	pageHTML = string(mustAsset("page.html"))
	pageJS   = mustAsset("page.js")
	pageCSS  = mustAsset("page.css")
)

// handler is the workbench's routes behind the edge checks.
func (w *workbench) handler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, f func(http.ResponseWriter, *http.Request) error) {
		h := http.Handler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if err := f(rw, r); err != nil {
				writeError(rw, err)
			}
		}))
		if strings.HasPrefix(pattern, "POST ") {
			h = loopback.LimitBody(maxBody, h)
		}
		mux.Handle(pattern, h)
	}
	route("GET /{$}", w.servePage)
	route("GET /assets/page.js", asset("text/javascript; charset=utf-8", pageJS))
	route("GET /assets/page.css", asset("text/css; charset=utf-8", pageCSS))
	route("GET /api/state", w.serveState)
	route("GET /api/atom/{ref}", w.serveAtom)
	route("GET /api/liveness", w.serveLiveness)
	route("POST /api/close", w.serveClose)
	route("POST /api/selection", w.serveSelection)
	route("POST /api/range/{id}/edit-summary", w.serveEdit(true))
	route("POST /api/range/{id}/edit-topic", w.serveEdit(false))
	route("POST /api/range/{id}/remove", w.serveRemove)
	route("/", func(http.ResponseWriter, *http.Request) error { return errNotFound })
	return w.edge(mux)
}

var crossOrigin = http.NewCrossOriginProtection()

// edge runs the checks every request passes, in order: Host (DNS
// rebinding), revocation, the k → cookie exchange, the cookie, and the
// cross-origin check for POSTs (package doc §Access).
func (w *workbench) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		h := rw.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if err := w.m.guard.Check(r); err != nil {
			writeError(rw, err)
			return
		}
		if w.gate.isRevoked() {
			writeError(rw, errRevoked)
			return
		}
		c, _ := r.Cookie(w.auth.cookie)
		authed := c != nil && w.auth.valid(c.Value)
		if q := r.URL.Query(); r.Method == http.MethodGet && r.URL.Path == "/" && q.Has("k") {
			w.exchange(rw, r, q, authed)
			return
		}
		if !authed {
			writeError(rw, errNoAccess)
			return
		}
		if err := crossOrigin.Check(r); err != nil {
			writeError(rw, loopback.ErrCrossOrigin)
			return
		}
		next.ServeHTTP(rw, r)
	})
}

// exchange trades k for the session cookie and redirects to the URL
// without k, on every visit until the workbench closes (so the printed URL
// reopens the page in another browser); a wrong k is refused unless the
// browser already holds the session.
func (w *workbench) exchange(rw http.ResponseWriter, r *http.Request, q url.Values, authed bool) {
	v, ok, err := w.auth.exchange(w, q.Get("k"))
	if err != nil {
		writeError(rw, err)
		return
	}
	if !ok && !authed {
		writeError(rw, errNoAccess)
		return
	}
	if ok {
		http.SetCookie(rw, &http.Cookie{Name: w.auth.cookie, Value: v, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	q.Del("k")
	loc := "/"
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	http.Redirect(rw, r, loc, http.StatusSeeOther)
}

func asset(ctype string, body []byte) func(http.ResponseWriter, *http.Request) error {
	return func(rw http.ResponseWriter, _ *http.Request) error {
		rw.Header().Set("Content-Type", ctype)
		_, _ = rw.Write(body)
		return nil
	}
}

// servePage is GET /: the page with the state injected (`<` escaped).
func (w *workbench) servePage(rw http.ResponseWriter, r *http.Request) error {
	st, err := w.plan.State(r.Context(), w.view)
	if err != nil {
		return err
	}
	script, err := st.StateScript()
	if err != nil {
		return err
	}
	h := rw.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	_, _ = io.WriteString(rw, strings.Replace(pageHTML, stateMarker, string(script), 1))
	return nil
}

func (w *workbench) serveState(rw http.ResponseWriter, r *http.Request) error {
	st, err := w.plan.State(r.Context(), w.view)
	if err != nil {
		return err
	}
	writeJSON(rw, http.StatusOK, st)
	return nil
}

// atomText is GET /api/atom/{ref}'s body.
type atomText struct {
	Ref          string              `json:"ref"`
	Kind         midcompact.AtomKind `json:"kind"`
	ContentChars int                 `json:"contentChars"`
	ImageCount   int                 `json:"imageCount"`
	FullText     string              `json:"fullText"`
}

func (w *workbench) serveAtom(rw http.ResponseWriter, r *http.Request) error {
	ref := r.PathValue("ref")
	a, err := w.plan.Atom(r.Context(), ref)
	if err != nil {
		return err
	}
	if a == nil {
		return &apiError{http.StatusNotFound, "Unknown atom " + ref}
	}
	writeJSON(rw, http.StatusOK, atomText{a.Ref, a.Kind, a.Metrics.ContentChars, a.Metrics.ImageCount(), a.FullText})
	return nil
}

func (w *workbench) serveClose(rw http.ResponseWriter, _ *http.Request) error {
	writeJSON(rw, http.StatusOK, map[string]bool{"ok": true})
	w.finish(endPage)
	return nil
}

// mutate runs op inside the access gate with a ctx a forced close cancels,
// then answers the new state. The body has been read before: an edit whose
// body arrives after revocation never reaches the plan.
func (w *workbench) mutate(rw http.ResponseWriter, r *http.Request, op func(context.Context) error) error {
	if !w.gate.begin() {
		return errRevoked
	}
	defer w.gate.finish()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(w.forceCtx, cancel)
	defer stop()
	if err := op(ctx); err != nil {
		return err
	}
	st, err := w.plan.State(ctx, w.view)
	if err != nil {
		return err
	}
	writeJSON(rw, http.StatusOK, st)
	return nil
}

func (w *workbench) serveSelection(rw http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if w.view != ViewSelection {
		return errSelectionView
	}
	spans, keep, err := decodeSelection(body)
	if err != nil {
		return err
	}
	return w.mutate(rw, r, func(ctx context.Context) error { return w.plan.SaveSelection(ctx, spans, keep) })
}

func (w *workbench) serveEdit(summary bool) func(http.ResponseWriter, *http.Request) error {
	return func(rw http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		if w.view != ViewReview {
			return errEditView
		}
		v, err := decodeValue(body)
		if err != nil {
			return err
		}
		v = jstext.Trim(v)
		id := r.PathValue("id")
		return w.mutate(rw, r, func(ctx context.Context) error {
			var err error
			if summary {
				if v == "" {
					return errEmptySummary
				}
				err = w.plan.UpdateRange(ctx, id, &v, nil)
			} else {
				err = w.plan.UpdateRange(ctx, id, nil, &v)
			}
			return rangeErr(id, err)
		})
	}
}

func (w *workbench) serveRemove(rw http.ResponseWriter, r *http.Request) error {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return err
	}
	id := r.PathValue("id")
	return w.mutate(rw, r, func(ctx context.Context) error { return rangeErr(id, w.plan.RemoveRange(ctx, id)) })
}

func rangeErr(id string, err error) error {
	if err != nil && isUnknownRange(err) {
		return &apiError{http.StatusNotFound, "Unknown range " + id}
	}
	return err
}
