// Package workbench is midcompact's web workbench (seed 001 §Concurrency,
// §External contracts; reference §5.6): one loopback page with the Selection
// and Review views over the current transaction's plan.
//
// # Shape
//
// A [Manager] holds the workbenches of one extension runtime (one Pi
// session). [Manager.Open] starts a server on internal/loopback
// (127.0.0.1, port 0, every timeout set, Host guard against DNS rebinding)
// and returns the ready notice once the URL is ready; the workbench then
// keeps the UI side of the planning lock until its asynchronous cleanup ends,
// when it calls [Plan.Release]. [Manager.Registered] reports a workbench
// that is open or still cleaning up; [Manager.CloseAll] force-closes every
// one of them (one already shutting down included) and returns when each
// cleanup has released the lock.
//
// The page never touches Pi: every read and edit goes through [Plan], which
// the extension implements (its *extension.Plan). Nothing in the browser commits; commit stays a command.
//
// # Wiring (the extension's side)
//
// One Manager per extension runtime (per session), made by extension.New
// (extension/webui.go). The extension's Surfaces for "webui" forward to it;
// its *extension.Plan is the [Plan] (Atom is snapshot-local: a fresh
// planView, then snap.Atom(ref)). The production wiring passes no
// OpenBrowser: the sidecar launches nothing, the user opens the URL of the
// ready notice.
//
//	wb := workbench.NewManager(&workbench.Options{})
//	// Surfaces.Open, for req.Surface == "webui":
//	notice, err := wb.Open(ctx, req.View, req.Plan) // after TryAcquireUI; returns once the URL is ready
//	// err: nothing open, the extension releases the lock; else show notice ("info")
//	// Surfaces.Registered:  wb.Registered()   (the "already open" guard)
//	// Surfaces.CloseAll:    wb.CloseAll(ctx)  (close-webui after the confirm; session_start,
//	//                                          session_tree before restoring; session_shutdown)
//
// The workbench calls Plan.Release exactly once, when its cleanup ends,
// and Plan.Notify only for the closed/failed notices of a page-lifecycle
// close.
//
// # Routes (reference §5.6)
//
//	GET  /                             page; the ReviewState JSON replaces <!--MIDCOMPACT_STATE-->
//	GET  /api/state                    200 ReviewState
//	GET  /api/atom/{ref}               200 {ref,kind,contentChars,imageCount,fullText} / 404
//	GET  /api/liveness                 SSE ": connected", ": keepalive" every 10 s
//	POST /api/close                    200 {"ok":true}, then close
//	POST /api/selection                {spans:[{startRef,endRef}],keepRefs:[]} → ReviewState
//	POST /api/range/{id}/edit-summary  {value} → ReviewState
//	POST /api/range/{id}/edit-topic    {value} → ReviewState
//	POST /api/range/{id}/remove        → ReviewState
//	GET  /assets/page.js, /assets/page.css  the page's own script and style
//
// Error bodies are {"error": text} with the reference's texts; the mapping
// from errors to statuses is one table (errors.go).
//
// # Access (beyond upstream, whose token is cosmetic)
//
// The URL carries ?k=<32 random bytes, hex>, valid for the workbench's
// whole life. Every GET with the right k (compared in constant time) sets an
// HttpOnly SameSite=Strict cookie named per port (cookies are not
// port-isolated) holding the workbench's session secret (32 random bytes,
// minted at the first such GET) and answers 303 to the same URL without k,
// so reopening the printed URL works in any browser (another one, a private
// window) until the workbench closes. A wrong or missing k without the
// cookie gets 403. Every route needs the cookie (compared in constant time
// with loopback.Equal) and a loopback Host; POSTs must also pass
// http.CrossOriginProtection, since another port of 127.0.0.1 is same-site
// and would get the SameSite cookie. k and the secret are never logged. The
// notice's "(token <6 hex>)" is the first six hex digits of k. Once the
// workbench closes the URL is dead: 410 while cleanup runs, then no server
// at all (reference §5.6: the page becomes unreachable).
//
// # Closing
//
// A workbench ends by the page (POST /api/close), by its liveness stream
// (the stream ends and no newer one attaches within [Options.ReconnectGrace];
// no stream at all within [Options.FirstStream]), by a serve failure, or by
// CloseAll. Cleanup always runs in this order: revoke API access (every later
// request gets 410, a queued liveness request included; an edit whose body
// was still arriving is refused before it reaches [Plan]), cancel in-flight
// Plan calls and wait for them, close the sockets, [Plan.Release], notify
// (page-lifecycle and failure closes only; CloseAll's caller reports
// itself), deregister.
//
// # Own decisions
//
//   - Texts the reference does not give: 403 `Open the workbench with the
//     URL Pi printed. If it was closed, run /midcompact:review-webui or
//     /midcompact:select-webui again.`, 410 `The midcompact workbench is
//     closed. Open a new one with /midcompact:review-webui or
//     /midcompact:select-webui.`,
//     400 `value must be a string.`, 400 `Request body must be a JSON
//     object.`.
//   - The reconnect grace (default 3 s) lets a page reload replace its
//     stream without ending the workbench.
//   - Closed notices (`Midcompact review-webui closed.`, `Selection closed.
//     The plan is saved; tell the Agent to continue when ready.`) are shown
//     for page-lifecycle closes, not for CloseAll.
package workbench
