package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

// newLiveCmd is the riffrec live/1 endpoint (seed 002).
func newLiveCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "live", Short: "The riffrec live/1 endpoint between a live page and a coding agent", Long: liveHelp}
	cmd.AddCommand(newLiveStartCmd(), newLiveServeCmd(), newLiveWaitCmd(), newLiveAckCmd(), newLiveStatusCmd(), newLiveStopCmd(), newLiveReplayCmd())
	return cmd
}

// liveHelp is `pikit live --help`: the loop, and what a page sends.
const liveHelp = `The riffrec live/1 endpoint between a live page and a coding agent.

The agent runs start (prints the url and the page token for the page), then
loops: wait prints one wake envelope, the agent works on its units, then
ack CHECKPOINT_ID. status reads the state from disk; stop ends the session.
Every verb works on one run directory: --root DIR, relative to the working
directory, by default .pikit/live (symlinks resolved, as Pi reports its
working directory: the root /live:start uses in a Pi started there).

The page posts envelopes to POST <url>/events, one object or an array, with
  Authorization: Bearer <page_token>
  X-Riffrec-Session: <session_id>
X-Riffrec-Session is on every page route (/events, /stream, /mint,
/session/end) and equals the session_id of the envelopes; the first request
binds the board to it, another id is answered 409 {"active_session_id"}, a
missing header 400. An Origin header, when sent, must be exactly --app-origin.

One envelope (seq counts up from 1; t in ms; type one of click,
network_request, console_error, navigation, transcript, unit, unit_update,
unit_withdraw, annotation, checkpoint, answer, frame, mic, mode,
stream_state):
  {"schema_version":"live/1","session_id":"s1","seq":1,"t":1200,
   "type":"checkpoint","payload":{"id":"cp1","trigger":"send","mode":"smart"}}
The answer is 200 {"acked_seq":1}; a rejected envelope is 400
{"reason":"invalid_payload","seq":1,"detail":"payload.mode: want one of ..."}
and acknowledges nothing in the body.

A unit (one change the riffer asks for; status "initial" when the page
first sends it), released to the agent by the next checkpoint:
  {"schema_version":"live/1","session_id":"s1","seq":2,"t":1300,"type":"unit",
   "payload":{"id":"u1","statement":"Make the Save button green",
   "transcript_excerpt":"make save green","anchors":[],"evidence":{"frame_ids":[],
   "annotation_ids":[],"transcript_span":{"t_start":0,"t_end":900}},"status":"initial"}}

GET <url>/stream (same headers) is the page's event stream (SSE): ack,
agent, unit_status and applied events. A response ends soon after it has
sent status updates; the page reconnects, as EventSource does.`

// liveFlags are the flags start and serve share.
type liveFlags struct {
	root, appOrigin, host string
	port, ownerPID        int
	trustProxy            []string
	foreground            bool
}

func (f *liveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.root, "root", "", rootUsage)
	cmd.Flags().StringVar(&f.appOrigin, "app-origin", "", "exact origin of the live page, http(s)://host[:port] (required for a fresh start)")
	cmd.Flags().StringVar(&f.host, "host", "", "bind address (default 127.0.0.1)")
	cmd.Flags().IntVar(&f.port, "port", 0, "port (default: previous port, else ephemeral)")
	cmd.Flags().IntVar(&f.ownerPID, "owner-pid", 0, "stop the process (not the session) when this pid exits (start default: the grandparent of this command, else its parent; --foreground: none)")
	cmd.Flags().StringSliceVar(&f.trustProxy, "trust-proxy", nil, "proxy IPs whose X-Forwarded-Proto the mint route may believe")
}

// rootUsage is every live verb's --root help: [live.ResolveRoot]'s rule.
const rootUsage = "run directory, relative to the working directory (default " + live.DefaultRoot + ")"

// parse checks the flags and resolves f.root with [live.ResolveRoot].
func (f *liveFlags) parse(cmd *cobra.Command) (origin string, proxies []netip.Addr, err error) {
	if f.root, err = live.ResolveRoot("", f.root); err != nil {
		return "", nil, err
	}
	if f.appOrigin != "" {
		if origin, err = live.NormalizeOrigin(f.appOrigin); err != nil {
			return "", nil, err
		}
	}
	if f.port < 0 || f.port > 65535 {
		return "", nil, fmt.Errorf("--port must be 0-65535")
	}
	if cmd.Flags().Changed("owner-pid") && f.ownerPID <= 1 {
		return "", nil, fmt.Errorf("--owner-pid must be an integer > 1")
	}
	for _, s := range f.trustProxy {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return "", nil, fmt.Errorf("--trust-proxy %q is not an IP address", s)
		}
		proxies = append(proxies, a)
	}
	if f.host != "" {
		if _, err := netip.ParseAddr(f.host); err != nil {
			return "", nil, fmt.Errorf("--host %q is not an IP address", f.host)
		}
	}
	return origin, proxies, nil
}
