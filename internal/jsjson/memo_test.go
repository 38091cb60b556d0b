package jsjson

import (
	"reflect"
	"testing"
)

type mapMemo map[uintptr][]byte

func (m mapMemo) Get(x map[string]any) ([]byte, bool) {
	b, ok := m[reflect.ValueOf(x).Pointer()]
	return b, ok
}

func (m mapMemo) Put(x map[string]any, enc []byte) { m[reflect.ValueOf(x).Pointer()] = enc }

// TestMarshal_Memo: with a Memo the output is byte-identical, depth-1 and
// depth-2 maps are offered to Put and what Get returns is written; an
// indented encoding ignores the Memo.
func TestMarshal_Memo(t *testing.T) {
	inner := map[string]any{"z": 1.0, "\u2028a": "x<y", "10": true, "2": []any{nil}}
	plane := map[string]any{"b": inner, "a": "\U0001F600"}
	deep := map[string]any{"k": map[string]any{"q": 1.0}}
	v := map[string]any{"plane": plane, "deep": map[string]any{"d": deep}, "n": 3.0}
	for _, opts := range []Options{{}, {SortKeys: true}, {LoneSurrogates: true}} {
		want, err := Marshal(v, &opts)
		if err != nil {
			t.Fatal(err)
		}
		memo := mapMemo{}
		o := opts
		o.Memo = memo
		got, err := Marshal(v, &o)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%+v: got %s, want %s (%v)", opts, got, want, err)
		}
		if len(memo) != 4 { // depth 1: plane, v["deep"]; depth 2: inner, deep; not deep["k"] (depth 3)
			t.Fatalf("%+v: memo holds %d encodings, want 4", opts, len(memo))
		}
		memo.Put(plane, []byte(`"memo"`))
		got, _ = Marshal(v, &o)
		if want := `"plane":"memo"`; !contains(string(got), want) {
			t.Fatalf("memo not used: %s", got)
		}
	}
	memo := mapMemo{}
	if _, err := Marshal(v, &Options{Indent: "  ", Memo: memo}); err != nil || len(memo) != 0 {
		t.Fatalf("indented encoding used the memo: %v %d", err, len(memo))
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
