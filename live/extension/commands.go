package extension

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/piext"
)

func (rt *runtime) commands() []piext.Command {
	return []piext.Command{
		{Name: "live:start", Description: "Start or attach to this project's live endpoint and deliver its batches here ([--root DIR] [--app-origin ORIGIN] [--host IP] [--trust-proxy IP,...])",
			Run: rt.startCmd},
		{Name: "live:status", Description: "Show the live session's board summary", Run: rt.statusCmd},
		{Name: "live:stop", Description: "End the live session: stop the endpoint, retire its tokens, keep the logs", Run: rt.stopCmd},
	}
}

// startArgs are /live:start's flags, as `pikit live start` spells them.
type startArgs struct {
	root, appOrigin, host string
	trustProxy            []netip.Addr
}

// parseStartArgs reads "--flag value" and "--flag=value" pairs.
func parseStartArgs(s string) (startArgs, error) {
	var a startArgs
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		name, val, hasVal := strings.Cut(f[i], "=")
		if !hasVal {
			if i+1 >= len(f) {
				return a, fmt.Errorf("live: %s needs a value", name)
			}
			i++
			val = f[i]
		}
		switch name {
		case "--root":
			a.root = val
		case "--app-origin":
			o, err := live.NormalizeOrigin(val)
			if err != nil {
				return a, err
			}
			a.appOrigin = o
		case "--host":
			if _, err := netip.ParseAddr(val); err != nil {
				return a, fmt.Errorf("live: --host %q is not an IP address", val)
			}
			a.host = val
		case "--trust-proxy":
			for _, s := range strings.Split(val, ",") {
				ip, err := netip.ParseAddr(strings.TrimSpace(s))
				if err != nil {
					return a, fmt.Errorf("live: --trust-proxy %q is not an IP address", s)
				}
				a.trustProxy = append(a.trustProxy, ip)
			}
		default:
			return a, fmt.Errorf("live: unknown argument %q (want --root, --app-origin, --host, --trust-proxy)", f[i])
		}
	}
	return a, nil
}

// startCmd starts or resumes the endpoint, prints its start line and
// starts watching it from this Pi.
func (rt *runtime) startCmd(ctx context.Context, c *piext.CommandCall) error {
	a, err := parseStartArgs(c.Args)
	if err != nil {
		return notifyErr(ctx, c.Pi, err)
	}
	cwd, err := c.Pi.Cwd(ctx)
	if err != nil {
		return err
	}
	root, err := live.ResolveRoot(cwd, a.root)
	if err != nil {
		return notifyErr(ctx, c.Pi, err)
	}
	if w := rt.watching(); w != "" && w != root {
		return notifyErr(ctx, c.Pi, fmt.Errorf("live: already watching %s; /live:stop it first", w))
	}
	if a.appOrigin == "" {
		if sess, err := live.ReadSession(root); err != nil || sess.PageToken == "" {
			return notifyErr(ctx, c.Pi, errFreshStart)
		}
	}
	line, err := rt.o.Start(ctx, StartRequest{Root: root, AppOrigin: a.appOrigin, Host: a.host, TrustProxy: a.trustProxy, OwnerPID: rt.o.OwnerPID})
	if err != nil {
		return notifyErr(ctx, c.Pi, err)
	}
	if err := writeRootFile(cwd, root); err != nil {
		rt.o.Logger.Warn("live: record the root failed", "err", err)
	}
	out := strings.TrimSpace(string(live.MarshalLine(line)))
	note := fmt.Sprintf("pikit live: watching from this Pi (pid %d); the endpoint stops, keeping the session, when Pi exits", rt.o.OwnerPID)
	rt.kick() // a batch not delivered is tried again
	switch err := rt.watch(root, false); {
	case errors.Is(err, ErrWatchedElsewhere):
		note = "pikit live: " + strings.TrimPrefix(err.Error(), "live: ")
		rt.setFooter(ctx, "live: "+strings.TrimPrefix(err.Error(), "live: "))
	case err != nil:
		return notifyErr(ctx, c.Pi, err)
	}
	return c.Pi.Notify(ctx, out+"\n"+note+"\nPage URL: "+line.URL+"  page token: "+line.PageToken, "info")
}

// errFreshStart is /live:start's answer when no session can be resumed
// and no --app-origin was given (the endpoint's Origin check needs one).
var errFreshStart = errors.New("live: a fresh start needs the live page's origin: /live:start --app-origin ORIGIN (for example --app-origin http://localhost:3000)")

// statusCmd prints the watch state, the page URL and token (while the
// session has them) and GET /status's summary.
func (rt *runtime) statusCmd(ctx context.Context, c *piext.CommandCall) error {
	root, err := rt.rootOr(ctx, c.Pi)
	if err != nil {
		return err
	}
	state := rt.footerText()
	if state == "" {
		state = "live: not watching"
	}
	cl, err := live.NewAgentClient(root, requestTimeout)
	if err != nil {
		return c.Pi.Notify(ctx, state+"\nlive: no endpoint for this project ("+err.Error()+"); /live:start starts one", "info")
	}
	if sess, err := live.ReadSession(root); err == nil && sess.PageToken != "" {
		state += "\nPage URL: " + sess.URL + "  page token: " + sess.PageToken
	}
	sum, err := cl.Status(ctx)
	if err != nil {
		return c.Pi.Notify(ctx, state+"\n"+err.Error(), "warning")
	}
	return c.Pi.Notify(ctx, state+"\n"+strings.TrimSpace(string(live.MarshalLine(sum))), "info")
}

// stopCmd stops the watcher and ends the session as `pikit live stop`.
func (rt *runtime) stopCmd(ctx context.Context, c *piext.CommandCall) error {
	root, err := rt.rootOr(ctx, c.Pi)
	if err != nil {
		return err
	}
	rt.unwatch()
	rep, err := rt.o.Stop(ctx, root)
	if err != nil {
		return notifyErr(ctx, c.Pi, err)
	}
	rt.setFooter(ctx, "live: ended")
	return c.Pi.Notify(ctx, strings.TrimSpace(string(live.MarshalLine(rep))), "info")
}

// notifyErr shows err as the command's output (RPC clients read notify).
func notifyErr(ctx context.Context, p *piext.Pi, err error) error {
	_ = p.Notify(ctx, err.Error(), "error")
	return nil
}
