package extension

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/pikit-dev/pikit/midcompact/internal/tui"
	"strings"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// tuiHost is the part of interactive Pi the TUI overlays need besides
// [host]: the remote component (ctx.ui.custom) and the text dialogs.
type tuiHost interface {
	Custom(ctx context.Context, c piext.Component, opts piext.CustomOptions) (json.RawMessage, error)
	Editor(ctx context.Context, title, prefill string) (piext.DialogResult, error)
	Input(ctx context.Context, title, placeholder string, o piext.DialogOptions) (piext.DialogResult, error)
}

var _ tuiHost = (*piext.Pi)(nil)

// errNoTUI is what a host without ctx.ui.custom answers.
var errNoTUI = errors.New("this host has no interactive component support")

// Overlay placement (reference §5.5: ctx.ui.custom with overlay, a width,
// a maxHeight and anchor "center"). The sizes are this package's choice.
const (
	overlayWidth     = "90%"
	overlayMaxHeight = "85%"
	overlayHeightPct = 85 // the same share, for the component's own layout
	defaultRows      = 24 // when the bridge does not say
)

var overlayOptions = piext.CustomOptions{Overlay: true, OverlayOptions: &piext.OverlayOptions{
	Width: overlayWidth, MaxHeight: overlayMaxHeight, Anchor: "center"}}

// overlayView is a pure view the overlay component draws.
type overlayView interface {
	Render(w, height int, st tui.Style) []string
}

// overlay adapts a view to piext.Component: it lays out for 85% of the
// terminal's rows and records the last action a key asked for (done ends
// the component).
type overlay struct {
	view overlayView
	key  func(string) (done bool)
	rows int
}

func (o *overlay) SetRows(rows int) { o.rows = rows }

func (o *overlay) Render(width int, palette map[string]string) []string {
	rows := o.rows
	if rows <= 0 {
		rows = defaultRows
	}
	return o.view.Render(width, rows*overlayHeightPct/100, paletteStyle(palette))
}

func (o *overlay) HandleKey(key string) (bool, any) { return o.key(key), nil }

// paletteStyle colours with the theme's ANSI foreground sequences and
// resets the foreground and the intensity after ("dim" is SGR 2).
func paletteStyle(palette map[string]string) tui.Style {
	if len(palette) == 0 {
		return nil
	}
	return func(color, text string) string {
		seq, ok := palette[color]
		if !ok {
			return text
		}
		return seq + text + "\x1b[22;39m"
	}
}

// openTUI runs the Selection or Review overlay (reference §5.5) on h, the
// interactive Pi of the command, and returns when it closes; the caller
// holds the UI lock around it. It shows its own notices; an error means
// the overlay could not be shown or the plan could not be read.
func (rt *runtime) openTUI(ctx context.Context, h host, plan *Plan, view string) error {
	th, ok := h.(tuiHost)
	if !ok {
		return errNoTUI
	}
	if view == selectCommand.view {
		return rt.selectionTUI(ctx, h, th, plan)
	}
	return rt.reviewTUI(ctx, h, th, plan)
}

// selectionTUI shows Selection once: save replaces the plan's ranges by
// the normalised selection (one DRAFT entry); closing without a change
// leaves the plan as it was.
func (rt *runtime) selectionTUI(ctx context.Context, h host, th tuiHost, plan *Plan) error {
	pv, err := rt.planView(ctx, plan.h)
	if err != nil {
		return err
	}
	v := tui.NewSelectionView(pv.snap, pv.draft)
	action := tui.SelectionNone
	o := &overlay{view: v, key: func(k string) bool {
		action = v.HandleKey(k)
		return action != tui.SelectionNone
	}}
	if _, err := th.Custom(ctx, o, overlayOptions); err != nil {
		return err
	}
	if action != tui.SelectionSave {
		return h.Notify(ctx, uitext.MsgSelectionClosed, "info")
	}
	spans, keep := v.Selection()
	if err := plan.SaveSelection(ctx, spans, keep); err != nil {
		return h.Notify(ctx, "Selection could not be saved: "+err.Error(), "warning")
	}
	return h.Notify(ctx, uitext.MsgPlanSaved, "info")
}

// reviewTUI shows Review until it is closed: e, t and d close the overlay,
// run their dialog, append a DRAFT when something changed, and open it
// again on the new plan (reference §5.5).
func (rt *runtime) reviewTUI(ctx context.Context, h host, th tuiHost, plan *Plan) error {
	var v *tui.ReviewView
	for {
		pv, err := rt.planView(ctx, plan.h)
		if err != nil {
			return err
		}
		if v == nil {
			v = tui.NewReviewView(pv.snap, pv.draft)
		} else {
			v.Reload(pv.snap, pv.draft)
		}
		action := tui.ReviewNone
		o := &overlay{view: v, key: func(k string) bool {
			action = v.HandleKey(k)
			return action != tui.ReviewNone
		}}
		if _, err := th.Custom(ctx, o, overlayOptions); err != nil {
			return err
		}
		if err := rt.reviewAction(ctx, h, th, plan, v, action); err != nil {
			if errors.Is(err, errReviewClosed) {
				return nil
			}
			return err
		}
	}
}

var errReviewClosed = errors.New("review closed")

// reviewAction performs one Review action on the selected range. A
// cancelled or empty summary, a cancelled topic input and a declined
// removal change nothing; an empty topic clears it.
func (rt *runtime) reviewAction(ctx context.Context, h host, th tuiHost, plan *Plan, v *tui.ReviewView, a tui.ReviewAction) error {
	r := v.Selected()
	if r == nil || a == tui.ReviewNone || a == tui.ReviewClose {
		return errReviewClosed
	}
	id := r.ID
	var err error
	switch a {
	case tui.ReviewEditSummary:
		res, derr := th.Editor(ctx, "Summary of "+id, r.Summary)
		if derr != nil {
			return derr
		}
		if s := strings.TrimSpace(res.Value); res.Status == piext.DialogAnswered && s != "" {
			err = plan.UpdateRange(ctx, id, &s, nil)
		}
	case tui.ReviewEditTopic:
		res, derr := th.Input(ctx, "Topic of "+id+" (empty clears it)", r.Topic, piext.DialogOptions{})
		if derr != nil {
			return derr
		}
		if res.Status == piext.DialogAnswered {
			s := strings.TrimSpace(res.Value)
			err = plan.UpdateRange(ctx, id, nil, &s)
		}
	case tui.ReviewRemove:
		res, derr := h.Confirm(ctx, tui.RemoveRangeTitle, v.RemoveMessage(), piext.DialogOptions{})
		if derr != nil {
			return derr
		}
		if res.Status == piext.DialogAnswered && res.Confirmed {
			err = plan.RemoveRange(ctx, id)
		}
	}
	if err != nil {
		return h.Notify(ctx, "Review edit failed: "+err.Error(), "warning")
	}
	return nil
}
