package piext_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

// contextScript runs testdata/context.mjs in mode against exe installed
// with the embedded bridge and returns its "KEY <json>" lines.
func contextScript(t *testing.T, exe, mode string) map[string]json.RawMessage {
	t.Helper()
	return bridgeScript(t, exe, "testdata/context.mjs", nil, mode)
}

// contextCall is one context call seen from the bridge: the texts of the
// messages Go returned (nil: unchanged), whether each is the very object
// Pi passed at its index, and the bytes of each hook request.
type contextCall struct {
	Texts     []string
	Kept      []bool
	HookBytes []int
}

func (c contextCall) sent() int {
	n := 0
	for _, b := range c.HookBytes {
		n += b
	}
	return n
}

// A message of 60 KB that changes in its middle without changing its
// length is detected: Go gets it (Fresh) and only it, once; an object
// edited in place after a call does not make the bridge believe the
// sidecar holds its new content. The messages Go left unchanged go back to
// Pi as Pi's own objects, neither re-sent by Go nor rebuilt.
func TestBridge_ContextSameLengthEditInTheMiddle(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./piext/internal/testext")
	got := contextScript(t, exe, "samelength")
	var r struct{ First, Unchanged, Second, Third, Fourth contextCall }
	if err := json.Unmarshal(got["SAMELENGTH"], &r); err != nil {
		t.Fatalf("%s: %v", got["SAMELENGTH"], err)
	}
	const msg = 60000
	if r.First.Texts != nil || r.First.sent() < 3*msg {
		t.Errorf("first call: %d bytes sent, texts %v; want all three messages, unchanged", r.First.sent(), r.First.Texts)
	}
	if r.Unchanged.Texts != nil || r.Unchanged.sent() > 2000 {
		t.Errorf("unchanged call: %d bytes sent, texts %v; want ids only, unchanged", r.Unchanged.sent(), r.Unchanged.Texts)
	}
	if len(r.Second.HookBytes) != 1 || r.Second.sent() < msg || r.Second.sent() > 2*msg {
		t.Errorf("same-length edit: hook requests %v; want one carrying the edited message only", r.Second.HookBytes)
	}
	if len(r.Second.Texts) != 3 || !strings.Contains(r.Second.Texts[1], "CTXEDIT-SEEN-BY-GO") || strings.Contains(r.Second.Texts[0]+r.Second.Texts[2], "CTXEDIT") {
		t.Errorf("same-length edit: Go did not see it (texts %d)", len(r.Second.Texts))
	}
	if want := []bool{true, false, true}; !slices.Equal(r.Second.Kept, want) {
		t.Errorf("same-length edit: returned messages are Pi's objects %v, want %v", r.Second.Kept, want)
	}
	if r.Third.Texts != nil || r.Third.sent() < msg || r.Third.sent() > 2*msg {
		t.Errorf("after an in-place edit: %d bytes sent, texts %v; want the original message again", r.Third.sent(), r.Third.Texts)
	}
	if r.Fourth.Texts != nil || r.Fourth.sent() > 2000 {
		t.Errorf("fourth call: %d bytes sent; want ids only", r.Fourth.sent())
	}
}

// After session_start the bridge sends the session's messages ahead
// (context/warm), so the first LLM call of a resumed session sends ids and
// the new prompt only, and Go still sees every message as new (Fresh).
func TestBridge_ContextWarmUpBeforeTheFirstCall(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./piext/internal/testext")
	got := contextScript(t, exe, "warm")
	var r struct {
		Warm  []int
		First contextCall
	}
	if err := json.Unmarshal(got["WARM"], &r); err != nil {
		t.Fatalf("%s: %v", got["WARM"], err)
	}
	if len(r.Warm) != 1 || r.Warm[0] < 120000 {
		t.Errorf("warm-up requests %v; want one carrying the session's messages", r.Warm)
	}
	if r.First.sent() > 2000 {
		t.Errorf("first call sent %d bytes; want ids and the new prompt only", r.First.sent())
	}
	if len(r.First.Texts) != 4 || r.First.Texts[2] != "warm CTXEDIT-SEEN-BY-GO" || r.First.Texts[3] != "new prompt" {
		t.Errorf("first call: Go did not see the warmed messages as new: %q", r.First.Texts)
	}
}
