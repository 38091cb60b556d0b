package stateflow

import (
	"strings"
	"testing"
)

func TestBarrier(t *testing.T) {
	got := Barrier([]string{"read", ToolPatchState, "bash"})
	if got[0] != msgBarrierSibling || got[1] != "" || got[2] != msgBarrierSibling {
		t.Errorf("one patch: %q", got)
	}
	got = Barrier([]string{ToolPatchState, ToolPatchState})
	if got[0] != msgBarrierExactlyOne || got[1] != msgBarrierExactlyOne {
		t.Errorf("two patches: %q", got)
	}
	if got := Barrier([]string{"read", "bash"}); got[0] != "" || got[1] != "" {
		t.Errorf("no patch: %q", got)
	}
}

func TestPatchStateSchema_dataDriven(t *testing.T) {
	want := `{"additionalProperties":false,"properties":{"cwd":{"additionalProperties":false,"properties":{"artifacts":{"type":"object"},"contract":{"type":"object"},"intents":{"type":"object"},"lazy":{"type":"object"},"working":{"type":"object"}},"type":"object"},`
	if got := canon(t, PatchStateSchema(BuiltinRoots())); !strings.HasPrefix(got, want) {
		t.Errorf("schema = %s", got)
	}
	roots, err := BuiltinRoots().With(Root{Name: "x_acme_notes", Patchable: true, Projected: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := canon(t, PatchStateSchema(roots)); !strings.Contains(got, `"x_acme_notes":{"type":["object","null"]}`) {
		t.Errorf("registered root missing from schema: %s", got)
	}
	if _, err := DecodePatchArgs(roots, []byte(`{"cwd":{"x_acme_notes":{"entries":["a"]}}}`)); err != nil {
		t.Errorf("registered root rejected: %v", err)
	}
	if _, err := BuiltinRoots().With(Root{Name: "notes"}); err == nil {
		t.Error("non-x_ module root accepted")
	}
}

func TestActiveHead(t *testing.T) {
	v := sparseView(t, 7)
	head, err := ActiveHead(HeadInput{Roots: BuiltinRoots(), View: v, Specification: "ship it", ProjectionID: "p1",
		Extra: []Member{{"x_acme_notes", map[string]any{"n": 1.0}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := PrefixActiveHead + `{"specification":"ship it","state":{"contract":{"db":"sqlite"},"intents":{"ship":{"plan":{"$ref":"session.working.gone"}}},"response":"done","working":{"list":[10,11,12],"note":"abc"}},` +
		`"lazy_navigation":{"available":true,"path":"effective.lazy","keys":{"plan":"array"}},` +
		`"recent_transitions":{"cwd":[{"contract":{"db":"pg"}},{"contract":{"db":"sqlite"}}],"session":[{"intents":{"ship":{"plan":{"$ref":"session.working.gone"}}},"working":{"list":[10,11,12],"note":"abc"}},{"response":"done"}]},` +
		`"x_acme_notes":{"n":1}}`
	if head[0] != want {
		t.Errorf("head\n got  %s\n want %s", head[0], want)
	}
	if head[1] != "State Flow projection: p1" {
		t.Errorf("projection block %q", head[1])
	}
	eff, _ := v.EffectiveAt(0)
	passive, _ := PassiveHead(BuiltinRoots(), eff)
	if strings.Contains(passive, `"response"`) || !strings.HasPrefix(passive, PrefixPassiveHead) {
		t.Errorf("passive head carries response: %s", passive)
	}
}

func TestStatusReport(t *testing.T) {
	out := StatusReport(StatusInput{Roots: BuiltinRoots(), Mode: "active", CWDKey: "--a--", SessionKey: "k", Step: 3, Limit: 7, View: sparseView(t, 7)})
	for _, want := range []string{"State Flow active\n", "Revision: g0c2s2\n", "Hot history: 3 of 7\n", "Scope memory: session ", "\n\n{\"intents\":"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

func TestParseConfig(t *testing.T) {
	for _, tt := range []struct{ in, mode, err string }{
		{`{}`, "off", ""},
		{`{"mode":"active","historyLimit":100}`, "active", ""},
		{`{"autoStart":true}`, "active", ""},
		{`{"passiveBootstrap":false,"passiveTools":false}`, "off", ""},
		{`{"passiveTools":true}`, "passive", ""},
		{`{"mode":"off","autoStart":true}`, "off", ""},
		{`{"historyLimit":101}`, "", `Invalid State Flow configuration at "c": historyLimit must be an integer from 0 to 100`},
		{`{"extra":1}`, "", `Invalid State Flow configuration at "c": unknown key extra`},
		{`{`, "", `Invalid State Flow configuration at "c": invalid JSON`},
	} {
		c, err := ParseConfig([]byte(tt.in), "c")
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: err = %v, want %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || c.Mode != tt.mode {
			t.Errorf("%s: mode %q err %v, want %s", tt.in, c.Mode, err, tt.mode)
		}
	}
}

// The head writes a lone surrogate kept by DecodeValue as JSON.stringify
// does (\udxxx), not as U+FFFD (reference §6.3).
func TestActiveHead_LoneSurrogate(t *testing.T) {
	o := Boundary{ID: "o"}
	v := &View{Lineage: []Boundary{o}, Streams: [3]*Stream{NewStream(o), NewStream(o), NewStream(o)}}
	val, err := DecodeValue([]byte(`{"working":{"note":"a\udc00b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Advance("A", map[string]map[string]any{"session": val.(map[string]any)}, 7); err != nil {
		t.Fatal(err)
	}
	head, err := ActiveHead(HeadInput{Roots: BuiltinRoots(), View: v, Specification: "x" + string([]byte{0xed, 0xb0, 0x80}), ProjectionID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(head[0], `"state":{"working":{"note":"a\udc00b"}}`) || !strings.Contains(head[0], `"specification":"x\udc00"`) {
		t.Errorf("head does not keep lone surrogates as \\udxxx: %s", head[0])
	}
}
