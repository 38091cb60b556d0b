package extension_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/pirpc"
)

// resultTexts are the text parts of the tool results among evs, decoded.
func resultTexts(t *testing.T, evs []pirpc.Event) []string {
	t.Helper()
	var out []string
	for _, e := range find[*pirpc.ToolExecutionEnd](evs) {
		var r struct {
			Content []struct{ Text string }
		}
		if err := json.Unmarshal(e.Result, &r); err != nil {
			t.Fatalf("tool result %s: %v", e.Result, err)
		}
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		out = append(out, b.String())
	}
	return out
}

// Seed 001 §External contracts on the real Pi: Pi's own validator reports
// a request's unknown member against the branch its action names (the
// action is the union's tag), and an unknown action lists the actions.
func TestRealPi_ValidatorBlamesTheNamedBranch(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser)
	for _, c := range []struct {
		args     string
		want     []string
		unwanted string
	}{
		{`{"request":{"action":"plan_show","bogus":1}}`,
			[]string{"request.bogus"}, "request.action"},
		{`{"request":{"action":"recall_list","detail":"full"}}`, // detail belongs to recall_read
			[]string{"request.detail"}, "request.action"},
		{`{"request":{"action":"measure_all"}}`,
			[]string{"request.action", `"inspect"`, `"recall_read"`}, "unknown"},
	} {
		evs := s.prompt(t, ctx, "CALL "+c.args)
		texts := resultTexts(t, evs)
		if len(texts) != 1 {
			t.Fatalf("%s: tool results %q", c.args, texts)
		}
		for _, w := range c.want {
			if !strings.Contains(texts[0], w) {
				t.Errorf("%s: validation error lacks %q:\n%s", c.args, w, texts[0])
			}
		}
		if i := strings.Index(texts[0], "Received arguments"); strings.Contains(texts[0][:max(i, 0)], c.unwanted) {
			t.Errorf("%s: validation error names %q:\n%s", c.args, c.unwanted, texts[0])
		}
	}
}

// Seed 001 §External contracts on the real Pi: a group label from inspect
// given as an atom ref is answered as one, with the group's atoms.
func TestRealPi_GroupLabelGivenAsRef(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser, secondUser)
	for _, args := range []string{
		`{"request":{"action":"locate_ref","ref":"g0002"}}`,
		`{"request":{"action":"measure","candidates":[{"start":"g0002","end":"g0002"}]}}`,
	} {
		texts := resultTexts(t, s.prompt(t, ctx, "CALL "+args))
		if len(texts) != 1 || !strings.Contains(texts[0], "g0002 is a group label, not an atom ref") || !strings.Contains(texts[0], "Its atoms are a") {
			t.Errorf("%s = %q", args, texts)
		}
	}
}
