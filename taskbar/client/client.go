// Package client is the taskbar's Browser Client: our own plain JavaScript
// and CSS (client.js, client.css) that mount the Pi taskbar inside one
// Shadow-DOM host on a development page (seed 000 "Corner composer and
// taskbar accessibility", "Browser reconciliation and host navigation",
// "Normalized browser context", "Prompt envelope"; reference taskbar.md §10–11).
//
// The assets are compiled in only under the pitaskbar build tag (embed.go);
// without it [FS] is empty and [Embedded] is false (noembed.go). Everything
// else in this file exists in both builds so the host integration can name
// the wire formats without caring about the tag.
//
// # Assets
//
// The host serves [FS] below its mount base:
//
//	<mount>/assets/client.js   text/javascript; charset=utf-8
//	<mount>/assets/client.css  text/css; charset=utf-8
//
// The page loads only client.js; the script links client.css into its own
// shadow root, so the stylesheet never styles the host page.
//
// # Bootstrap
//
// The page carries exactly the markup [Markup] renders, for example:
//
//	<script type="application/json" id="pi-browser-taskbar-bootstrap" style="display:none!important">{"mount_base":"/dev/pi-browser-taskbar","csrf_token":"t0k3n","remote_access":false}</script><script src="/dev/pi-browser-taskbar/assets/client.js" defer></script>
//
// The JSON object ([Bootstrap]) has mount_base (absolute path, no trailing
// slash), csrf_token (string), remote_access (boolean: a non-empty
// allowed_hosts list; never the list) and optionally project_app (the Phoenix
// OTP app name for HEEx source hints). The client re-reads the element before
// every request, so a bootstrap replaced by a Turbo-style body swap supplies a
// fresh CSRF token. When the element is missing the mount base is taken from
// the script's own URL (…/assets/client.js) and the token is empty.
// client.js sets display:none !important inline on the element, so a host
// stylesheet such as `* { all: unset }` never shows the JSON (and its token)
// as page text. A page shown inside a frame mounts no taskbar.
//
// # Requests
//
// GET <mount>/state, POST <mount>/tasks, DELETE <mount>/tasks/{id} (id
// path-escaped with encodeURIComponent) and POST <mount>/session/reset, with
// Accept: application/json, Content-Type: application/json on bodies,
// credentials "same-origin" (the browser sends the host's cookies, so a
// session cookie that binds the token reaches the server; the client sets
// none) and, on every non-GET request, the header [CSRFHeader] carrying
// csrf_token. Every mutation also carries Idempotency-Key: a random version 4
// UUID (36 characters), fresh per user action, so a resend of the same
// request (Chromium's own, on a reset connection) carries the same key; the
// body is unchanged. Mutations are sent once and never retried; any failure is
// reconciled with one GET /state. Reads poll every 500 ms while the session
// is starting, resetting or busy or the task is running or cancelling, every
// 30 s otherwise; failed reads keep the last snapshot and back off
// min(30 s, 1 s·2^(n−1)). The retry note shows in the pinned footer (at once
// for an HTTP error, from the second network failure); from the third
// consecutive failure the status and the launcher read
// "Connection lost" (data-state "disconnected") and Run/Stop is disabled
// until a read succeeds. Error bodies are read only for error.code; the
// client shows its own fixed text for each stable code. A 422 invalid_csrf
// is not resent either: the client re-reads the bootstrap (a body swap may
// have rotated the token) and asks the user to try again.
//
// # Tabs
//
// The seed's polling alone makes tabs converge ("without browser-to-browser
// coordination"); this only shortens the wait. On top of that polling, never
// instead of it, tabs of one browser share a
// BroadcastChannel named "pi-browser-taskbar:" + mount_base. A tab posts the
// bare notice {type: "pi-browser-taskbar:state-changed"} after each mutation
// (answered or not) and whenever a read changes the session status or id or
// the task id or status; every other tab answers a notice with one GET
// /state, never a mutation. Notices carry no state, so an idle tab converges
// at once instead of at its next 30 s poll, and they stop once the tabs agree.
//
// # Layout
//
// The composer's block size is capped by the viewport; only its body
// ([data-body]: remote warning, marks list, instruction, feedback) scrolls.
// The head ([data-head]: title, model, New session, Close, task focus with
// Mark element and Clear all marks) stays pinned at the panel's top edge and
// the footer (status line, then Copy prompt and Run/Stop) at its bottom edge,
// with Run/Stop at one width for every label, so Close and Mark element stay
// reachable and Stop keeps its position while output streams.
// A mark lists its selector and a short label of the element
// ([data-mark-name], local only, never sent); a mark made behind the open
// composer scrolls the page when it can. The model name is one line with an
// ellipsis and the full text in its title.
//
// # Per-tab state
//
// The tab keeps, in sessionStorage under "pi-browser-taskbar:" + mount_base,
// whether the panel is open, the draft, the marks' selectors (with the page's
// path and query) and where tool calls split the current task's output. After
// a full reload of the same page (an app's hot reload) the panel reopens with
// the draft (the instruction of the task this tab started, above its output)
// and the marks whose selector still names exactly one element (retried for
// 10 s while the app renders). Other navigations start fresh.
//
// # Output
//
// The task's output is Pi's text deltas concatenated (reference §7). Where
// the client saw a tool call between two parts (a "Running …", "Finished …"
// or "Tool failed …" activity), it draws a break ([data-output-break], no
// text) between them; truncated output shows none.
//
// # Frames
//
// Marking covers the top-level document only: a click inside a frame, or
// focus moving into a cross-origin frame, ends marking with guidance; Escape
// pressed inside a same-origin frame cancels marking.
//
// # Stop and Run
//
// Stop and Run share one button. A press that began on Stop, or a click
// within 800 ms after Stop turned back into Run, starts nothing.
//
// # Source hints
//
// At capture time the client reads three annotation families from the DOM and
// the first family that finds any evidence decides:
//
//   - pikit Go templates: comment pairs [SourceAnnotation] renders,
//     <!-- BEGIN gotmpl:<path> --> … <!-- END gotmpl:<path> -->, paired like
//     Rails ERB comments (innermost enclosing range at the nearest level,
//     invalid nearby boundaries → ambiguous, no outer fallback). A
//     project-relative path gives {role:"template", path,
//     precision:"template"}; an absolute, traversing, backslashed,
//     drive-lettered or vendor/ path gives "external".
//   - Rails ERB: <!-- BEGIN app/views/….erb --> pairs (reference §11).
//   - Phoenix HEEx debug annotations and data-phx-loc (reference §11), using
//     project_app from the bootstrap.
//
// # States
//
// The status shows one of Connecting, Ready, Working, Finished, Stopped,
// Unavailable as text, with data-state on the status element and on the host
// set to the task status, or else the session status. A failed task is not
// silently "Finished" (upstream gap §16.5): its status reads
// "Finished (failed)", data-state is "failed", the error line shows
// "Task failed. <task error>" and the live region announces it.
//
// # Session reset
//
// "New session" (next to the model) asks for confirmation inline and then
// sends POST <mount>/session/reset once; it is offered only while the
// session is ready and no task is running (seed "Session reset"; the upstream
// removed this control, gap §16.3).
//
// # Host element
//
// One div#pi-browser-taskbar-host[data-pi-browser-taskbar-host]
// [data-turbo-permanent][phx-update=ignore] is appended to body with an open
// shadow root. A second run of the script reuses it; turbo:before-render
// moves it into event.detail.newBody; if anything else removes it from body
// it is appended again. globalThis.PiBrowserTaskbar exposes envelope,
// canonicalJSON, sourceHint, selectorFor and captureContext for tests and
// debugging.
//
// # Testing
//
// The browser tests drive /usr/bin/chromium through chromedp against a
// scripted snapshot API and need the tag:
//
//	go test -race -tags pitaskbar ./taskbar/client/
//
// Under CI=true a missing chromium or axe-core fails them.
package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Names shared by the client and its host integration.
const (
	// HostID is the id of the taskbar's Shadow-DOM host element.
	HostID = "pi-browser-taskbar-host"
	// BootstrapID is the id of the bootstrap JSON script element.
	BootstrapID = "pi-browser-taskbar-bootstrap"
	// CSRFHeader is the request header that carries Bootstrap.CSRFToken on
	// every POST and DELETE. HTTP header names are case-insensitive.
	CSRFHeader = "X-CSRF-Token"
	// ScriptPath and StylePath are the asset paths relative to the mount
	// base; their base names are the file names in [FS].
	ScriptPath = "/assets/client.js"
	StylePath  = "/assets/client.css"
	// ScriptName and StyleName are the file names in [FS].
	ScriptName = "client.js"
	StyleName  = "client.css"
	// DefaultMountBase is the mount base used when nothing else is known.
	DefaultMountBase = "/dev/pi-browser-taskbar"
)

// Bootstrap is the JSON object inside the bootstrap element.
type Bootstrap struct {
	// MountBase is the absolute URL path of the taskbar API, without a
	// trailing slash, e.g. "/dev/pi-browser-taskbar".
	MountBase string `json:"mount_base"`
	// CSRFToken is sent back in [CSRFHeader] on every mutation.
	CSRFToken string `json:"csrf_token"`
	// RemoteAccess is true when allowed_hosts is non-empty; on an http: page
	// the client then shows the unencrypted-transport warning.
	RemoteAccess bool `json:"remote_access"`
	// ProjectApp is the Phoenix OTP app name used to classify HEEx
	// annotations; empty means none (HEEx hints are then unavailable).
	ProjectApp string `json:"project_app,omitempty"`
}

var (
	mountBaseRE  = regexp.MustCompile(`^(/[A-Za-z0-9._~!$'()*+,;=:@%-]+)+$`)
	projectAppRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// ErrInvalid reports a bootstrap value or annotation path that the client
// could not use.
var ErrInvalid = errors.New("client: invalid value")

// Markup returns the exact bootstrap markup for a page: the bootstrap JSON
// script element (styled display:none!important) followed by the deferred
// client script. Insert it once per
// HTML page, before </body> or in <head>. The JSON is encoded with <, > and &
// escaped, so it cannot close the script element. It returns an error
// wrapping [ErrInvalid] when MountBase is not an absolute path without a
// trailing slash, query or fragment, or ProjectApp is not ^[a-z][a-z0-9_]*$.
func Markup(b Bootstrap) (template.HTML, error) {
	if !mountBaseRE.MatchString(b.MountBase) || strings.Contains(b.MountBase, "/./") ||
		strings.Contains(b.MountBase, "/../") || strings.HasSuffix(b.MountBase, "/..") || strings.HasSuffix(b.MountBase, "/.") {
		return "", fmt.Errorf("bootstrap mount base %q: %w", b.MountBase, ErrInvalid)
	}
	if b.ProjectApp != "" && !projectAppRE.MatchString(b.ProjectApp) {
		return "", fmt.Errorf("bootstrap project app: %w", ErrInvalid)
	}
	data, err := json.Marshal(b) // HTML-safe: <, >, &, U+2028, U+2029 escaped
	if err != nil {
		return "", fmt.Errorf("encode bootstrap: %w", err)
	}
	var sb strings.Builder
	// The inline style keeps the JSON off screen even under a host stylesheet
	// such as `* { all: unset }`, which would make a script element inline.
	sb.WriteString(`<script type="application/json" id="` + BootstrapID + `" style="display:none!important">`)
	sb.Write(data)
	sb.WriteString(`</script><script src="`)
	sb.WriteString(html.EscapeString(b.MountBase + ScriptPath))
	sb.WriteString(`" defer></script>`)
	return template.HTML(sb.String()), nil
}

// SourceAnnotation returns the comment pair that marks the output of one Go
// html/template as coming from path:
//
//	<!-- BEGIN gotmpl:<path> -->  …template output…  <!-- END gotmpl:<path> -->
//
// path is project-relative with forward slashes (e.g.
// "examples/shop/templates/cards.html"); the client reports it as a
// {role:"template", path, precision:"template"} source hint for elements the
// pair encloses. html/template drops comments written in template text, so
// emit these values as template.HTML around the executed template. It returns
// an error wrapping [ErrInvalid] for an empty path, an absolute or
// drive-lettered path, a backslash, an empty, "." or ".." segment, a path
// over 500 bytes, invalid UTF-8, control or white space characters, or "--"
// and ">" (which would end the comment).
func SourceAnnotation(path string) (begin, end template.HTML, err error) {
	if !validAnnotationPath(path) {
		return "", "", fmt.Errorf("source annotation path: %w", ErrInvalid)
	}
	return template.HTML("<!-- BEGIN gotmpl:" + path + " -->"), template.HTML("<!-- END gotmpl:" + path + " -->"), nil
}

func validAnnotationPath(path string) bool {
	if path == "" || len(path) > 500 || !utf8.ValidString(path) {
		return false
	}
	if strings.HasPrefix(path, "/") || strings.ContainsAny(path, "\\>") || strings.Contains(path, "--") {
		return false
	}
	if len(path) >= 2 && path[1] == ':' && (path[0]|0x20 >= 'a' && path[0]|0x20 <= 'z') {
		return false
	}
	for _, r := range path {
		if r <= ' ' || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029 {
			return false
		}
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
