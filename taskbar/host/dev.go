package host

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/client"
	"github.com/pikit-dev/pikit/taskbar/inject"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// Taskbar is a mounted taskbar. Its methods are safe for concurrent use;
// a nil, disabled or untagged (see [Enabled]) Taskbar is inert.
type Taskbar struct {
	handler *taskbar.Handler
	rt      *runtime.Runtime // owned in-process runtime, or nil
	bc      *broker.Client   // owned broker client, or nil
	inject  *inject.Middleware
	log     *slog.Logger
}

// mount is [Mount] serving the Browser Client from assets.
func mount(ctx context.Context, mux *http.ServeMux, opts *Options, assets fs.FS) (*Taskbar, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := o.Config.Resolve(getenv)
	if err != nil {
		return nil, err
	}
	if !s.Enabled {
		return &Taskbar{}, nil
	}
	t := &Taskbar{log: log}
	owner := o.Owner
	if owner == nil && !o.piResolved {
		resolvePi(ctx, &s, piConfigured(o.Config, getenv), o.PiCacheDir, log)
	}
	if owner == nil && !o.InProcess {
		if bo, ok := brokerOptions(&o, s, log); ok {
			t.bc = broker.NewClient(bo)
			owner = t.bc
		}
	}
	if owner == nil {
		t.rt = runtime.New(&runtime.Options{
			Executable:  s.Executable,
			Dir:         s.ProjectRoot,
			TaskTimeout: s.TaskTimeout,
			Logger:      log,
		})
		owner = taskbar.InProcess(t.rt)
	}
	t.handler = taskbar.NewHandler(owner, &taskbar.Options{
		MountBase:    o.MountBase,
		AllowedHosts: s.AllowedHosts,
		Assets:       assets,
		Logger:       log,
	})
	t.inject = &inject.Middleware{Snippet: t.Snippet}
	base := t.handler.MountBase()
	mux.Handle(base, t.handler)
	mux.Handle(base+"/", t.handler)
	return t, nil
}

// Handler returns the taskbar API handler (nil when inert).
func (t *Taskbar) Handler() http.Handler {
	if t == nil || t.handler == nil {
		return nil
	}
	return t.handler
}

// MountBase returns the mount base ("" when inert).
func (t *Taskbar) MountBase() string {
	if t == nil || t.handler == nil {
		return ""
	}
	return t.handler.MountBase()
}

// Middleware returns h with the bootstrap injected into its HTML pages
// (see package inject for exactly which responses). An inert Taskbar
// returns h itself.
func (t *Taskbar) Middleware(h http.Handler) http.Handler {
	if t == nil || t.handler == nil {
		return h
	}
	return t.inject.Handler(h)
}

// Snippet returns the bootstrap markup for one page (client.Markup with a
// CSRF token bound to the request's cookie, set on w when missing), or nil
// when inert or when the client fails the taskbar's access check
// ([taskbar.Handler.Allowed]): a refused client gets neither markup nor a
// cookie, and its page is served untouched.
func (t *Taskbar) Snippet(w http.ResponseWriter, r *http.Request) []byte {
	if t == nil || t.handler == nil || !t.handler.Allowed(r) {
		return nil
	}
	m, err := client.Markup(client.Bootstrap{
		MountBase:    t.handler.MountBase(),
		CSRFToken:    t.handler.CSRFToken(w, r),
		RemoteAccess: t.handler.RemoteAccess(),
	})
	if err != nil {
		t.log.Error("taskbar host: bootstrap markup", "err", err)
		return nil
	}
	return []byte(m)
}

// brokerOptions completes o.Broker for settings s (see [Options.Broker]).
// It reports false when no broker launcher can be found.
func brokerOptions(o *Options, s taskbar.Settings, log *slog.Logger) (*broker.ClientOptions, bool) {
	var bo broker.ClientOptions
	if o.Broker != nil {
		bo = *o.Broker
	}
	if bo.ProjectRoot == "" {
		bo.ProjectRoot = s.ProjectRoot
	}
	if bo.Executable == "" {
		bo.Executable = s.Executable
	}
	if bo.TaskTimeout == 0 {
		bo.TaskTimeout = s.TaskTimeout
	}
	if bo.Getenv == nil {
		bo.Getenv = os.Getenv
	}
	if bo.Logger == nil {
		bo.Logger = log
	}
	if len(bo.Command) == 0 && !o.SelfBroker {
		pikit, err := exec.LookPath("pikit")
		if err != nil {
			log.Warn("taskbar host: no broker launcher (set SelfBroker or put pikit on PATH); Pi runs in this process")
			return nil, false
		}
		bo.Command = []string{pikit, "taskbar", "broker"}
	}
	return &bo, true
}

// brokerWatchEvery is how often watchSession reads a broker's snapshot.
const brokerWatchEvery = time.Second

// watchSession calls fn with the session state now and after each change
// until fn returns true or ctx ends. A runtime this Taskbar owns is
// followed change by change; a broker this Taskbar is a client of is read
// every [brokerWatchEvery] (a cached read while the broker's watch stream
// is live). With an Owner passed in, or inert, it returns at once.
func (t *Taskbar) watchSession(ctx context.Context, fn func(runtime.SessionState) bool) {
	if t != nil && t.rt == nil && t.bc != nil {
		t.watchBroker(ctx, fn)
		return
	}
	if t == nil || t.rt == nil {
		return
	}
	for {
		f, changed := t.rt.Watch()
		var s runtime.Snapshot // our runtime's own frame
		if err := json.Unmarshal(f.JSON, &s); err == nil && fn(s.Session) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

func (t *Taskbar) watchBroker(ctx context.Context, fn func(runtime.SessionState) bool) {
	tick := time.NewTicker(brokerWatchEvery)
	defer tick.Stop()
	for {
		if b, err := t.bc.State(ctx); err == nil {
			var s runtime.Snapshot // our broker's snapshot, in a frame read strictly
			if json.Unmarshal(b, &s) == nil && fn(s.Session) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Close releases the Pi owner this Taskbar created: an in-process runtime
// is stopped with its Pi process group; a broker client is closed, leaving
// the broker and Pi running for the next host process. An Owner passed in
// [Options] is the caller's to close. Close is idempotent and a no-op when
// inert.
func (t *Taskbar) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if t.bc != nil {
		t.bc.Close()
	}
	if t.rt != nil {
		return t.rt.Close(ctx)
	}
	return nil
}

// MountTool is [Mount] for development tools that always carry the
// taskbar, whatever the build tags (`pikit demo`, `pikit taskbar proxy`):
// it serves [client.DevFS]. A Go app mounts with [Mount], which the
// pitaskbar tag gates; an app that never calls MountTool or [RunProxy]
// links no Browser Client bytes.
func MountTool(ctx context.Context, mux *http.ServeMux, opts *Options) (*Taskbar, error) {
	return mount(ctx, mux, opts, client.DevFS())
}
