package pisession_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// tree: r ─ a ─ b ─ c
//
//	└─ d ─ e      (a branch from a); r2 ─ f (a second root); g's parent is missing
const tree = header +
	`{"type":"model_change","id":"r","parentId":null}` + "\n" +
	`{"type":"message","id":"a","parentId":"r","message":{"role":"user","content":"hi"}}` + "\n" +
	`{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[]}}` + "\n" +
	`{"type":"message","id":"c","parentId":"b","message":{"role":"user"}}` + "\n" +
	`{"type":"branch_summary","id":"d","parentId":"a","fromId":"c","summary":"left c","details":{"k":1}}` + "\n" +
	`{"type":"message","id":"e","parentId":"d","message":{"role":"user"}}` + "\n" +
	`{"type":"compaction","id":"r2","parentId":null,"summary":"sum","firstKeptEntryId":"b","tokensBefore":1234}` + "\n" +
	`{"type":"label","id":"f","parentId":"r2","targetId":"a","label":"mark"}` + "\n" +
	`{"type":"label","id":"g","parentId":"missing","targetId":"a"}` + "\n" +
	`{"type":"session_info","id":"h","parentId":"e"}` + "\n"

func TestBranch(t *testing.T) {
	f := readString(t, tree, nil)
	tests := []struct {
		leaf string
		want []string
		err  error
	}{
		{"", []string{"r", "a", "d", "e", "h"}, nil},
		{"c", []string{"r", "a", "b", "c"}, nil},
		{"e", []string{"r", "a", "d", "e"}, nil},
		{"r", []string{"r"}, nil},
		{"f", []string{"r2", "f"}, nil},
		{"g", []string{"g"}, pisession.ErrMissingParent},
		{"nope", []string{}, pisession.ErrUnknownEntry},
	}
	for _, tt := range tests {
		t.Run(tt.leaf, func(t *testing.T) {
			got, err := f.Branch(tt.leaf)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error = %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
	_, err := f.Branch("g")
	var be *pisession.BranchError
	if !errors.As(err, &be) || be.ID != "g" || be.ParentID != "missing" {
		t.Errorf("missing parent error = %#v", err)
	}
}

func TestBranch_CycleAndDuplicates(t *testing.T) {
	f := readString(t, header+
		`{"type":"x","id":"a","parentId":"c"}`+"\n"+
		`{"type":"x","id":"b","parentId":"a"}`+"\n"+
		`{"type":"x","id":"c","parentId":"b"}`+"\n", nil)
	if _, err := f.Branch("c"); !errors.Is(err, pisession.ErrCycle) {
		t.Errorf("cycle: %v", err)
	}
	self := readString(t, header+`{"type":"x","id":"a","parentId":"a"}`+"\n", nil)
	if _, err := self.Branch(""); !errors.Is(err, pisession.ErrCycle) {
		t.Errorf("self parent: %v", err)
	}
	// A duplicated id: the later entry wins, as in Pi's index.
	dup := readString(t, header+
		`{"type":"x","id":"r","parentId":null}`+"\n"+
		`{"type":"x","id":"a","parentId":"r","v":1}`+"\n"+
		`{"type":"x","id":"a","parentId":null,"v":2}`+"\n"+
		`{"type":"x","id":"b","parentId":"a"}`+"\n", nil)
	got, err := dup.Branch("b")
	if err != nil || len(got) != 2 || got[0].Line != 4 {
		t.Errorf("duplicate id: %v %v", got, err)
	}
	if e, ok := dup.Entry("a"); !ok || e.Line != 4 {
		t.Errorf("Entry(a) = %+v, %v; want line 4", e, ok)
	}
	empty := readString(t, header, nil)
	if got, err := empty.Branch(""); err != nil || len(got) != 0 {
		t.Errorf("empty file: %v, %v", got, err)
	}
}

func TestAccessors(t *testing.T) {
	f := readString(t, tree+
		`{"type":"custom_message","id":"cm","parentId":null,"customType":"note","content":[{"type":"text","text":"x"}],"display":true}`+"\n"+
		`{"type":"label","id":"l2","parentId":null,"targetId":"a"}`+"\n"+
		`{"type":"compaction","id":"bad","parentId":null,"summary":7}`+"\n", nil)
	get := func(id string) pisession.Entry {
		e, ok := f.Entry(id)
		if !ok {
			t.Fatalf("no entry %q", id)
		}
		return e
	}
	m, err := get("a").Message()
	if err != nil || m.Role() != "user" || string(m.Raw) != `{"role":"user","content":"hi"}` {
		t.Errorf("Message = %+v, %v", m, err)
	}
	bs, err := get("d").BranchSummary()
	if err != nil || bs.FromID != "c" || bs.Summary != "left c" || string(bs.Details) != `{"k":1}` {
		t.Errorf("BranchSummary = %+v, %v", bs, err)
	}
	c, err := get("r2").Compaction()
	if err != nil || !cmp.Equal(c, pisession.Compaction{Summary: "sum", FirstKeptEntryID: "b", TokensBefore: 1234}) {
		t.Errorf("Compaction = %+v, %v", c, err)
	}
	l, err := get("f").Label()
	if err != nil || l != (pisession.Label{TargetID: "a", Label: "mark"}) {
		t.Errorf("Label = %+v, %v", l, err)
	}
	l, err = get("l2").Label()
	if err != nil || !l.Cleared {
		t.Errorf("cleared Label = %+v, %v", l, err)
	}
	si, err := get("h").SessionInfo()
	if err != nil || si.Name != "" {
		t.Errorf("SessionInfo = %+v, %v", si, err)
	}
	cm, err := get("cm").CustomMessage()
	if err != nil || cm.CustomType != "note" || !cm.Display || string(cm.Content) != `[{"type":"text","text":"x"}]` || cm.Details != nil {
		t.Errorf("CustomMessage = %+v, %v", cm, err)
	}
	if _, err := get("bad").Compaction(); err == nil || errors.Is(err, pisession.ErrEntryType) {
		t.Errorf("summary of the wrong JSON type: %v, want a decode error", err)
	}
	if _, err := get("a").Custom(); !errors.Is(err, pisession.ErrEntryType) {
		t.Errorf("Custom on a message: %v", err)
	}
	if v, ok := get("r2").Field("tokensBefore"); !ok || string(v) != "1234" {
		t.Errorf("Field(tokensBefore) = %s, %v", v, ok)
	}
	if _, ok := get("r2").Field("nope"); ok {
		t.Error("Field(nope) present")
	}
}

func TestEntriesOf(t *testing.T) {
	raws := []json.RawMessage{
		json.RawMessage(`{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user"}}`),
		json.RawMessage(`{"type":"custom","id":"a","parentId":null,"id":"a2","Type":"x"}`),
		json.RawMessage(`[1]`),
	}
	got := pisession.EntriesOf(raws)
	want := []pisession.Entry{
		{Raw: raws[0], ID: "b", ParentID: "a", Type: "message", Timestamp: "t"},
		{Raw: raws[1], ID: "a2", Type: "custom"}, // the last id counts; names are exact
		{Raw: raws[2]},
	}
	if !cmp.Equal(got, want) {
		t.Errorf("EntriesOf = %+v, want %+v", got, want)
	}
}
