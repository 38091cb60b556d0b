package stateflow

import (
	"testing"
)

// sparseView builds the reference's sparse example: CWD touched at the first
// and third transitions only, Session at the second and third.
func sparseView(t *testing.T, limit int) *View {
	t.Helper()
	o := Boundary{ID: "o"}
	v := &View{Lineage: []Boundary{o}, Streams: [3]*Stream{NewStream(o), NewStream(o), NewStream(o)}}
	steps := []map[string]map[string]any{
		{"cwd": obj(t, `{"contract":{"db":"pg"},"lazy":{"plan":[1,2]}}`)},
		{"session": obj(t, `{"working":{"list":[10,11,12],"note":"abc"},"intents":{"ship":{"plan":{"$ref":"session.working.gone"}}}}`)},
		{"cwd": obj(t, `{"contract":{"db":"sqlite"}}`), "session": obj(t, `{"response":"done"}`)},
	}
	for i, p := range steps {
		if _, err := v.Advance(string(rune('A'+i)), p, limit); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func readText(t *testing.T, r *Reader, args string) string {
	t.Helper()
	a, err := DecodeReadArgs([]byte(args))
	if err != nil {
		return "error: " + err.Error()
	}
	out, err := r.Read(a)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

func TestReader_Read(t *testing.T) {
	r := &Reader{Roots: BuiltinRoots(), View: sparseView(t, 7), Limit: 7}
	tests := []struct{ args, want string }{
		{`{"path":"effective"}`, `{"value":{"contract":{"db":"sqlite"},"intents":{"ship":{"plan":{"$ref":"session.working.gone"}}},"response":"done","working":{"list":[10,11,12],"note":"abc"}}}`},
		{`{"path":"lazy"}`, `{"value":{"plan":[1,2]}}`},
		{`{"path":"effective.lazy.plan[1]"}`, `{"value":2}`},
		{`{"path":"contract.db"}`, `{"value":"sqlite"}`},
		{`{"path":"effective[1].contract.db"}`, `{"value":"pg"}`},
		{`{"path":"cwd[1].contract.db"}`, `{"value":"pg"}`},
		{`{"path":"session[2]"}`, `{"value":{}}`},
		{`{"path":"cwd[2]"}`, `{"value":{"contract":{"db":"pg"}}}`},
		{`{"path":"global.intents"}`, `{"value":null}`},
		{`{"path":"working.list[0:2]"}`, `{"value":[10,11]}`},
		{`{"path":"working.list[1..3]"}`, `{"value":[11,12]}`},
		{`{"path":"working.list[3]"}`, `error: Index 3 is outside working.list with length 3`},
		{`{"path":"working.list[2:4]"}`, `error: Range [2:4] is outside working.list with length 3`},
		{`{"path":"working.nope"}`, `error: State Flow read path does not exist: working.nope`},
		{`{"path":"state"}`, `error: ` + msgNeedRoot},
		{`{"path":"effective[8]"}`, `error: State Flow read path index must be an integer from 0 to 7`},
		{`{"path":"effective[4]"}`, `error: ` + MsgPredatesOrigin},
		{`{"path":"working..x"}`, `error: ` + msgBadSelector},
		{`{"path":"working[-1]"}`, `error: ` + msgBadSelector},
		{`{"path":"cwd.patches"}`, `{"patch":{"contract":{"db":"sqlite"}}}`},
		{`{"path":"cwd.patches[1]"}`, `{"patch":{"contract":{"db":"pg"},"lazy":{"plan":[1,2]}}}`},
		{`{"path":"cwd.patches[2]"}`, `error: Requested cwd patch predates retained hot history`},
		{`{"path":"working","projection":"keys"}`, `{"meta":{"type":"object","size":2},"keys":{"list":"array","note":"string"}}`},
		{`{"path":"working.note","projection":"keys"}`, `{"meta":{"type":"string","length":3},"keys":[]}`},
		{`{"path":"working.list","projection":"keys"}`, `{"meta":{"type":"array","length":3},"keys":[]}`},
		{`{"path":"working.list[0]","projection":"keys"}`, `{"meta":{"type":"number"},"keys":[]}`},
		{`{"path":"effective.contract","projection":"patch"}`, `{"patch":{"db":"sqlite"}}`},
		{`{"path":"session[1]","projection":"patch"}`, `{"patch":{"intents":{"ship":{"plan":{"$ref":"session.working.gone"}}},"working":{"list":[10,11,12],"note":"abc"}}}`},
		{`{"paths":["contract.db","working.note"]}`, `{"value":["sqlite","abc"]}`},
		{`{"paths":["contract.db","working.nope"]}`, `error: State Flow read path does not exist: working.nope`},
		{`{}`, `error: read_state requires path or paths`},
		{`{"path":"a","paths":["b"]}`, `error: read_state accepts path or paths, not both`},
		{`{"path":"session.working.gone"}`, `{"value":null,"hint":[{"type":"dangling-reference","message":"` + msgDangling + `","paths":["session.intents.ship.plan"]}]}`},
	}
	for _, tt := range tests {
		if got := readText(t, r, tt.args); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.args, got, tt.want)
		}
	}
	if got, want := r.View.Vector(), "g0c2s2"; got != want {
		t.Errorf("vector = %s, want %s", got, want)
	}
}

func TestView_Validate_messages(t *testing.T) {
	roots := BuiltinRoots()
	tests := []struct {
		name   string
		break_ func(v *View)
		limit  int
		want   string
	}{
		{"tail over limit", func(v *View) {}, 1, "Temporal scope tail exceeds configured history limit 1"},
		{"revision", func(v *View) { v.Streams[2].Revision = 0 }, 7, "Temporal scope revision predates its retained patch tail"},
		{"order", func(v *View) { s := v.Streams[2]; s.Patches[0], s.Patches[1] = s.Patches[1], s.Patches[0] }, 7, "Temporal scope tail is not ordered after its checkpoint"},
		{"ancestry", func(v *View) { v.Streams[2].Patches[1].Transition.Parent = "zz" }, 7, "Disconnected State Flow temporal ancestry"},
		{"null", func(v *View) { v.Streams[1].Checkpoint.State = map[string]any{"working": map[string]any{"a": nil}} }, 7,
			"Invalid temporal materialized semantic state in cwd checkpoint: null is not allowed"},
		{"plane type", func(v *View) { v.Streams[1].Checkpoint.State = map[string]any{"working": "x"} }, 7,
			"Invalid temporal materialized semantic state in cwd checkpoint: invalid semantic fields or artifact metadata"},
		{"null in tail", func(v *View) {
			v.Streams[2].Patches[1].Patch = map[string]any{"working": map[string]any{"a": []any{nil}}}
		}, 7,
			"Invalid temporal materialized semantic state in session tail: null is not allowed"},
		{"element out of bounds", func(v *View) {
			v.Streams[2].Checkpoint.State = map[string]any{"working": map[string]any{"l": []any{1.0}}}
			v.Streams[2].Patches[0].Patch = map[string]any{"working": map[string]any{"l": map[string]any{"[3]": 2.0}}}
		}, 7, "State patch array index [3] is out of bounds for length 1"},
		{"checkpoint boundary", func(v *View) { v.Streams[0].Checkpoint.Through.ID = " " }, 7, MsgInvalidBoundary},
		{"record boundary", func(v *View) { v.Streams[2].Patches[0].Transition.Parent = v.Streams[2].Patches[0].Transition.ID }, 7, MsgInvalidBoundary},
		{"lineage boundary", func(v *View) { v.Lineage[0].ID = "\u00a0" }, 7, MsgInvalidBoundary},
		{"lineage duplicate", func(v *View) { v.Lineage[2].ID = v.Lineage[0].ID }, 7, "Duplicate State Flow temporal boundary"},
		{"lineage size", func(v *View) { v.Lineage = nil }, 7, "Temporal lineage must contain between one and 8 boundaries"},
		{"lineage link", func(v *View) { v.Lineage[2].Parent = "x" }, 7, "Disconnected State Flow temporal lineage"},
		{"conflict", func(v *View) { v.Streams[0].Checkpoint.Through = Boundary{ID: "A"} }, 7, "Conflicting State Flow temporal lineage"},
		{"checkpoint newer", func(v *View) { v.Streams[0].Checkpoint.Through = v.Lineage[1] }, 7, "Scope checkpoint is newer than the guaranteed hot boundary"},
		{"beyond head", func(v *View) { v.Lineage = v.Lineage[:3] }, 7, "Temporal scope patch is beyond the active head"},
		{"no patch", func(v *View) { v.Streams[1].Patches = v.Streams[1].Patches[1:]; v.Streams[1].Revision = 2 }, 7, "Temporal boundary has no semantic patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := sparseView(t, 7)
			if err := v.Validate(roots, 7); err != nil {
				t.Fatalf("valid view: %v", err)
			}
			tt.break_(v)
			err := v.Validate(roots, tt.limit)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestView_limitZero(t *testing.T) {
	v := sparseView(t, 0)
	if len(v.Lineage) != 1 || len(v.Streams[1].Patches) != 0 {
		t.Fatalf("limit 0 kept history: %d lineage, %d patches", len(v.Lineage), len(v.Streams[1].Patches))
	}
	if err := v.Validate(BuiltinRoots(), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.EffectiveAt(1); err == nil || err.Error() != MsgPredatesOrigin {
		t.Fatalf("offset 1 at limit 0: %v", err)
	}
	if _, err := v.Advance("C", map[string]map[string]any{"cwd": {"working": map[string]any{"x": 1.0}}}, 0); err != errTransitionReused {
		t.Fatalf("reused id: %v", err)
	}
}
