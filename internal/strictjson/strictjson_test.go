package strictjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pikit-dev/pikit/internal/strictjson"
)

type rec struct {
	Type    string         `json:"type"`
	Success bool           `json:"success"`
	Data    jsontext.Value `json:"data"`
}

func TestUnmarshal(t *testing.T) {
	deep := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	for _, tc := range []struct {
		name, in string
		p        *strictjson.Policy
		kind     error // nil: success
		offset   int64
	}{
		{"ok", `{"type":"a","success":true,"data":{"x":[1]},"other":1}`, nil, nil, 0},
		{"case differs", `{"Type":"a"}`, &strictjson.Policy{RejectUnknownMembers: true}, strictjson.ErrUnknownMember, 1},
		{"long s", `{"ſuccess":true}`, &strictjson.Policy{RejectUnknownMembers: true}, strictjson.ErrUnknownMember, 1},
		{"duplicate", `{"type":"a","type":"b"}`, nil, strictjson.ErrDuplicateName, 12},
		{"nested duplicate", `{"data":{"x":1,"x":2}}`, nil, strictjson.ErrDuplicateName, 15},
		{"duplicate in array", `{"data":[{},{"a/b":1,"a/b":2}]}`, nil, strictjson.ErrDuplicateName, 21},
		{"syntax", `{"type":}`, nil, strictjson.ErrSyntax, 8},
		{"trailing", `{} x`, nil, strictjson.ErrSyntax, 3},
		{"type", `{"success":"yes"}`, nil, strictjson.ErrType, 11},
		{"invalid utf8", "{\"type\":\"\xff\"}", nil, strictjson.ErrSyntax, 9},
		{"invalid utf8 allowed", "{\"type\":\"\xff\"}", &strictjson.Policy{AllowInvalidUTF8: true}, nil, 0},
		{"too large", `{"type":"abc"}`, &strictjson.Policy{MaxBytes: 5}, strictjson.ErrTooLarge, 5},
		{"too deep", `{"data":` + deep + `}`, &strictjson.Policy{MaxDepth: 4}, strictjson.ErrTooDeep, 11},
		{"deep enough", `{"data":` + deep + `}`, &strictjson.Policy{MaxDepth: 6}, nil, 0},
		{"brackets in strings", `{"type":"[[[[[[","data":"{{{{{"}`, &strictjson.Policy{MaxDepth: 1}, nil, 0},
		{"decoder depth", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), nil, strictjson.ErrTooDeep, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rec
			var v any = &r
			if tc.name == "decoder depth" {
				var a any
				v = &a
			}
			err := strictjson.Unmarshal([]byte(tc.in), v, tc.p)
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var e *strictjson.Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v (%T), want kind %v", err, err, tc.kind)
			}
			if e.Offset != tc.offset {
				t.Errorf("offset = %d, want %d (%v)", e.Offset, tc.offset, err)
			}
			if want, ok := pointers[tc.name]; ok && e.Pointer != want {
				t.Errorf("pointer = %q, want %q", e.Pointer, want)
			}
		})
	}
}

// pointers are the Error.Pointer values TestUnmarshal checks.
var pointers = map[string]jsontext.Pointer{
	"duplicate":          "/type",
	"nested duplicate":   "/data/x",
	"duplicate in array": "/data/1/a~1b",
	"type":               "/success",
	"invalid utf8":       "/type",
	"trailing":           "",
}

// FuzzUnmarshal checks the policy against encoding/json on any text: what
// strictjson accepts, encoding/json accepts with the same value (strict is
// never looser), and a text encoding/json accepts that strictjson refuses
// is refused for a policy reason (duplicate name, invalid UTF-8, depth).
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"type":"a","success":true,"data":[1,{"b":null}]}`, `{"a":1,"a":2}`, `{"Type":"x"}`,
		`[[[[[]]]]]`, `"\ud800"`, "\"\xff\"", `{"data":"[{"}`, `1e400`, `{} {}`, ``, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got any
		err := strictjson.Unmarshal(data, &got, &strictjson.Policy{MaxDepth: 64})
		var want any
		werr := json.Unmarshal(data, &want)
		if err == nil {
			if werr != nil {
				t.Fatalf("strict accepts %q, encoding/json: %v", data, werr)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("%q: strict %s, encoding/json %s", data, g, w)
			}
			var r rec
			_ = strictjson.Unmarshal(data, &r, &strictjson.Policy{RejectUnknownMembers: true})
			return
		}
		var e *strictjson.Error
		if !errors.As(err, &e) || e.Kind == nil {
			t.Fatalf("%q: error %v (%T) is not a *strictjson.Error with a kind", data, err, err)
		}
		if e.Offset < -1 || e.Offset > int64(len(data)) {
			t.Fatalf("%q: offset %d outside the text", data, e.Offset)
		}
		if werr == nil {
			switch e.Kind {
			case strictjson.ErrDuplicateName, strictjson.ErrTooDeep, strictjson.ErrSyntax: // syntax: invalid UTF-8 or a lone surrogate
			default:
				t.Fatalf("%q: strict refuses (%v) what encoding/json accepts", data, err)
			}
		}
	})
}

// BenchmarkUnmarshal compares with go-json-experiment called directly (the
// in-run baseline): the policy's own cost is the difference.
func BenchmarkUnmarshal(b *testing.B) {
	data := []byte(`{"type":"message_update","success":true,"data":{"role":"assistant","content":[{"type":"text","text":"hello <world>"}],"timestamp":1795980379562}}`)
	b.Run("strictjson", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var r rec
			if err := strictjson.Unmarshal(data, &r, &strictjson.Policy{AllowInvalidUTF8: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonv2", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var r rec
			if err := jsonv2.Unmarshal(data, &r, jsontext.AllowInvalidUTF8(true)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
