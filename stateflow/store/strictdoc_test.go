package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/strictjson"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// docSeeds are meta.json and runtime.json texts as written, and variants
// near them: forms the decoders must read or refuse.
func docSeeds(t testing.TB) []string {
	var seeds []string
	files, _ := filepath.Glob("testdata/interop/*/*/state-flow/*/*/*.json")
	more, _ := filepath.Glob("testdata/interop/*/*/state-flow/*.json")
	for _, p := range append(files, more...) {
		if b, err := os.ReadFile(p); err == nil && (strings.HasSuffix(p, fileMeta) || strings.HasSuffix(p, fileRuntime)) {
			seeds = append(seeds, string(b))
		}
	}
	const b0 = `{"id":"o","parent":null,"position":0}`
	const b1 = `{"id":"a","parent":"o","position":1}`
	for _, s := range []string{
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[` + b1 + `],"revision":1},"version":2}` + "\n",
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[` + b1 + `,` + b1 + `],"revision":1e0},"version":2,"x":[{"a":"\"}"},1]}`,
		`{"temporal":{"checkpoint":{"id":"","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","parent":"","position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","parent":null,"position":01},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","parent":null,"position":1234567890123456},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"\u006f","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"parent":null,"id":"o","position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2,"version":3}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0}, "version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2}x`,
		`{"bootstrap":false,"identity":{"cwd":"/home/ü/p","sessionId":"s"},"lineage":[` + b0 + `,` + b1 + `],"step":1,"version":1}` + "\n",
		`{"identity":{"cwd":"/p","sessionId":"s"},"lineage":[],"step":1,"version":1,"validation":{"a":[1,{"b":"]"}]}}`,
		`{"identity":{"cwd":"/p","sessionId":"s"},"lineage":` + b0 + `,"step":1,"version":1}`,
		`{"lineage":[` + b0 + `],"step":1e400,"version":1}`,
		`{}`, `[]`, `{"a":}`, `{"a":1,}`, `{"a"1}`, `{"a":"b\"}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0,"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","id":"o","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"Version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2,"x":{"\ud800":1,"\udc00":2}}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2,"x":[{"a":1,"a":2}],"y":}`,
		`{"identity":{"cwd":"/p","sessionId":"s","cwd":"/p"},"lineage":[` + b0 + `],"step":1,"version":1}`,
		`{"identity":{"cwd":"/p","sessionId":"s"},"lineage":[` + b0 + `],"step":1,"version":1,"Version":1}`,
		`{"identity":{"cwd":"/p","sessionId":"\ud800"},"lineage":[{"id":"\udc00","parent":null,"position":0}],"step":1,"version":1,"specification":"\ud83d"}`,
	} {
		seeds = append(seeds, s)
	}
	return seeds
}

// FuzzDecodeRuntime feeds arbitrary runtime.json bytes: decoding accepts or
// returns one of runtime.json's errors (upstream's texts, the lineage's,
// or ours for nesting and a repeated member), never panics. Text refused
// as not JSON is text JSON.parse refuses, text accepted or refused for a
// repeated member is text it reads (so strictjson refuses nothing else);
// an accepted runtime re-encodes to a file that decodes to the same
// runtime.
func FuzzDecodeRuntime(f *testing.F) {
	for _, s := range docSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rt, err := decodeRuntime(data, "/p", "")
		checkDocError(t, data, err, "State Flow session runtime", runtimeErrors)
		if err != nil {
			return
		}
		out, err := rt.encode()
		if err != nil {
			return // a kept unknown member the canonical encoder refuses
		}
		back, err := decodeRuntime(out, "/p", "")
		if err != nil || !reflect.DeepEqual(back, rt) {
			t.Fatalf("re-encoded runtime decodes to %+v, %v; want %+v\n%s", back, err, rt, out)
		}
	})
}

// FuzzWrittenDoc: where writtenMeta or writtenRuntime reads a text, the
// strict decode of the whole text reads the same document.
func FuzzWrittenDoc(f *testing.F) {
	for _, s := range docSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if doc, ok := writtenMeta(data); ok {
			want, err := strictMeta(data, "global")
			if err != nil || !reflect.DeepEqual(doc, want) {
				t.Fatalf("written form read %+v, strict decode %+v, %v: %q", doc, want, err, data)
			}
		}
		if doc, ok := writtenRuntime(data); ok {
			want, err := strictRuntime(data)
			if err != nil || !reflect.DeepEqual(doc, want) {
				t.Fatalf("written form read %+v, strict decode %+v, %v: %q", doc, want, err, data)
			}
		}
	})
}

// TestWrittenDoc_takesWrittenFiles: the files this package writes are read
// in the written form (else FuzzWrittenDoc would compare nothing real),
// and other forms are left to the strict decode.
func TestWrittenDoc_takesWrittenFiles(t *testing.T) {
	n := 0
	for _, s := range docSeeds(t) {
		if !strings.Contains(s, "00000000-0000-4000-8000") { // written files
			continue
		}
		var ok bool
		if strings.Contains(s, `"lineage"`) {
			_, ok = writtenRuntime([]byte(s))
		} else {
			_, ok = writtenMeta([]byte(s))
		}
		if !ok && !strings.Contains(s, `"version":1`) { // v1: no revision
			t.Errorf("written file declined: %s", s)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d written files found", n)
	}
	const b0 = `{"id":"o","parent":null,"position":0}`
	for _, s := range []string{
		`{"temporal":{"checkpoint":{"id":"\u006f","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0}, "version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2,"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2,"x":{"a":1,"a":2}}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2}x`,
		`{"temporal":{"patches":[],"checkpoint":` + b0 + `,"revision":0},"version":2}`,
		`{"version":2}`, `{}`, `{"temporal":0}`,
	} {
		if _, ok := writtenMeta([]byte(s)); ok {
			t.Errorf("accepted %s", s)
		}
	}
}

// runtimeErrors are the texts decodeRuntime may return (identity "/p").
var runtimeErrors = map[string]bool{
	MsgRuntimeJSON: true, MsgRuntimeEnvelope: true, MsgRuntimeVersion: true, MsgRuntimeIdentity: true,
	MsgRuntimeSemantic: true, MsgRuntimeInvalid: true, sf.MsgInvalidBoundary: true,
	"Temporal lineage must contain between one and 101 boundaries": true,
	"Duplicate State Flow temporal boundary":                       true,
	"Disconnected State Flow temporal lineage":                     true,
	sftext.TooDeepMsg("State Flow session runtime"):                true,
}

// checkDocError checks a decode of data by decodeDoc's rules: err is nil
// or one of known, or what's repeated-member error; "<what> contains
// invalid JSON" only for text JSON.parse refuses; success and a repeated
// member only for text it reads as an object.
func checkDocError(t *testing.T, data []byte, err error, what string, known map[string]bool) {
	t.Helper()
	_, verr := sf.DecodeValue(data)
	switch {
	case err == nil:
		if verr != nil {
			t.Fatalf("accepted what JSON.parse refuses (%v): %q", verr, data)
		}
	case strings.HasPrefix(err.Error(), what+" repeats member "):
		if verr != nil || !errors.Is(err, strictjson.ErrDuplicateName) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%v for text JSON.parse refuses (%v): %q", err, verr, data)
		}
	case !known[err.Error()]:
		t.Fatalf("unexpected error %v: %q", err, data)
	case err.Error() == what+" contains invalid JSON" && verr == nil:
		t.Fatalf("%v for text JSON.parse reads (strictjson: %v): %q", err, errors.Unwrap(err), data)
	}
}

// TestDecodeDoc_repeatedMember: a member name repeated in meta.json or
// runtime.json, at the top level or below, is refused with the file's
// text (ours) naming the member and its object, after the texts of a file
// JSON.parse refuses; a case variant of a member name is another member.
func TestDecodeDoc_repeatedMember(t *testing.T) {
	const b0 = `{"id":"o","parent":null,"position":0}`
	const temporal = `"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0}`
	const identity = `"identity":{"cwd":"/p","sessionId":"s"}`
	meta := func(s string) (any, error) { return decodeMeta([]byte(s), "global", "/s/meta.json", 0) }
	runtime := func(s string) (any, error) { return decodeRuntime([]byte(s), "/p", "") }
	for _, tc := range []struct {
		name   string
		decode func(string) (any, error)
		in     string
		want   string // "" accepted
	}{
		{"meta top", meta, `{` + temporal + `,"version":2,"temporal":{}}`, `State Flow global metadata repeats member "temporal"`},
		{"meta temporal", meta, `{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0,"revision":1},"version":2}`,
			`State Flow global metadata repeats member "revision" within "/temporal"`},
		{"meta boundary", meta, `{"temporal":{"checkpoint":{"id":"o","parent":null,"position":0,"id":"p"},"patches":[],"revision":0},"version":2}`,
			`State Flow global metadata repeats member "id" within "/temporal/checkpoint"`},
		{"meta kept member", meta, `{` + temporal + `,"version":2,"x":[0,{"a/b":1,"a/b":2}]}`, `State Flow global metadata repeats member "a/b" within "/x/1"`},
		{"meta escaped name", meta, `{` + temporal + `,"version":2,"\u0076ersion":2}`, `State Flow global metadata repeats member "version"`},
		{"meta invalid JSON first", meta, `{` + temporal + `,"version":2,"version":2,}`, "State Flow global metadata contains invalid JSON"},
		{"meta not finite first", meta, `{` + temporal + `,"version":2,"version":1e999}`, "Invalid State Flow global metadata"},
		{"meta not an object first", meta, `[{"a":1,"a":1}]`, "Invalid State Flow global metadata"},
		{"meta too deep first", meta, `{"a":1,"a":1,"x":` + strings.Repeat("[", sf.MaxDepth) + strings.Repeat("]", sf.MaxDepth) + `}`,
			"State Flow global metadata is nested too deeply (more than 1000 levels)"},
		{"meta case variant", meta, `{` + temporal + `,"Version":2}`, `Invalid State Flow provenance document: "/s/meta.json"`},
		{"meta case variants", meta, `{` + temporal + `,"Version":2,"version":2,"VERSION":2}`, ""},
		{"runtime top", runtime, `{` + identity + `,"lineage":[` + b0 + `],"step":1,"version":1,"step":1}`, `State Flow session runtime repeats member "step"`},
		{"runtime identity", runtime, `{"identity":{"cwd":"/p","sessionId":"s","cwd":"/q"},"lineage":[` + b0 + `],"step":1,"version":1}`,
			`State Flow session runtime repeats member "cwd" within "/identity"`},
		{"runtime lineage", runtime, `{` + identity + `,"lineage":[{"id":"o","parent":null,"position":0,"position":0}],"step":1,"version":1}`,
			`State Flow session runtime repeats member "position" within "/lineage/0"`},
		{"runtime retired member", runtime, `{` + identity + `,"lineage":[` + b0 + `],"step":1,"version":1,"artifacts":{"k":1,"k":1}}`,
			`State Flow session runtime repeats member "k" within "/artifacts"`},
		{"runtime invalid JSON first", runtime, `{"step":1,"step":1,`, MsgRuntimeJSON},
		{"runtime case variant", runtime, `{` + identity + `,"lineage":[` + b0 + `],"step":1,"Version":1}`, MsgRuntimeVersion},
		{"runtime case variant kept", runtime, `{` + identity + `,"lineage":[` + b0 + `],"step":1,"version":1,"Step":"x"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.decode(tc.in)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant  %s", err, tc.want)
			}
			if strings.Contains(tc.want, "repeats member") != errors.Is(err, strictjson.ErrDuplicateName) {
				t.Errorf("errors.Is(%v, strictjson.ErrDuplicateName) = %v", err, !strings.Contains(tc.want, "repeats"))
			}
		})
	}
	m, err := decodeMeta([]byte(`{`+temporal+`,"Version":3,"version":2}`), "global", "/s/meta.json", 0)
	if err != nil || m.Version != 2 || m.Extra["Version"] != 3.0 {
		t.Errorf("case variant: version %v, Extra %v, err %v; want version 2, Extra[Version] 3", m.Version, m.Extra, err)
	}
	rt, err := decodeRuntime([]byte(`{`+identity+`,"lineage":[`+b0+`],"step":1,"version":1,"Step":"x"}`), "/p", "")
	if err != nil || rt.Step != 1 || rt.Extra["Step"] != "x" {
		t.Errorf("case variant: step %v, Extra %v, err %v; want step 1, Extra[Step] x", rt.Step, rt.Extra, err)
	}
}

// BenchmarkDecodeBoundaryFiles: a full-tail Session meta.json (100
// boundaries) and a runtime.json of a session with 110 transitions, through
// decodeMeta/decodeRuntime (the written form's scan of the boundaries,
// the strict decode of the other members) against JSON.parse's reading
// alone (sf.DecodeValue, the baseline) in the same run.
func BenchmarkDecodeBoundaryFiles(b *testing.B) {
	var sb strings.Builder
	bound := func(i int) string {
		return fmt.Sprintf(`{"id":"00000000-0000-4000-8000-%012d","parent":"00000000-0000-4000-8000-%012d","position":%d}`, i+1, i, i+1)
	}
	sb.WriteString(`{"artifacts":{},"temporal":{"checkpoint":` + bound(9) + `,"patches":[`)
	for i := 10; i < 110; i++ {
		if i > 10 {
			sb.WriteByte(',')
		}
		sb.WriteString(bound(i))
	}
	sb.WriteString(`],"revision":110},"version":2}` + "\n")
	meta := []byte(sb.String())
	sb.Reset()
	sb.WriteString(`{"bootstrap":false,"identity":{"cwd":"/home/u/proj","sessionId":"s"},"lineage":[`)
	for i := range 101 { // a lineage holds one to 101 boundaries
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(bound(i))
	}
	sb.WriteString(`],"step":110,"version":1}` + "\n")
	runtime := []byte(sb.String())
	for _, c := range []struct {
		name string
		data []byte
		fast func() error
	}{
		{"meta", meta, func() error { _, err := decodeMeta(meta, "session", "/m", 100); return err }},
		{"runtime", runtime, func() error { _, err := decodeRuntime(runtime, "/home/u/proj", ""); return err }},
	} {
		b.Run(c.name+"/general_decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sf.DecodeValue(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.fast(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestClassification_repeatedMember: a store whose meta.json or
// runtime.json repeats a member name, at the top level or nested, is
// refused by a read and a patch with our text, and no file changes; the
// checks before meta.json's (the checkpoint's JSON) still come first, and
// a case variant of a member name is not that member.
func TestClassification_repeatedMember(t *testing.T) {
	k := testCWDKey(t)
	sess := k + "/" + testSession
	for _, tt := range []struct {
		name  string
		apply func(root string)
		want  string
	}{
		{"meta top", insert("", "meta.json", `{`, `"temporal":0,`), `State Flow global metadata repeats member "temporal"`},
		{"meta temporal", insert(k, "meta.json", `"temporal":{`, `"revision":0,`), `State Flow cwd metadata repeats member "revision" within "/temporal"`},
		{"meta boundary", insert(sess, "meta.json", `"checkpoint":{`, `"id":"x",`), `State Flow session metadata repeats member "id" within "/temporal/checkpoint"`},
		{"meta owner", insert(k, "meta.json", `"owner":{`, `"cwd":"/x",`), `State Flow cwd metadata repeats member "cwd" within "/owner"`},
		{"runtime top", insert(sess, "runtime.json", `{`, `"step":0,`), `State Flow session runtime repeats member "step"`},
		{"runtime identity", insert(sess, "runtime.json", `"identity":{`, `"cwd":"/x",`), `State Flow session runtime repeats member "cwd" within "/identity"`},
		{"runtime lineage", insert(sess, "runtime.json", `"lineage":[{`, `"position":0,`), `State Flow session runtime repeats member "position" within "/lineage/0"`},
		{"checkpoint json before meta", both(put("", "checkpoint.json", "{"), insert("", "meta.json", `{`, `"version":2,`)), "State Flow global checkpoint contains invalid JSON"},
		{"meta case variant", replace("", "meta.json", `"version":`, `"Version":`), `Invalid State Flow provenance document: "ROOT/meta.json"`},
		{"runtime case variant", replace(sess, "runtime.json", `"version":`, `"Version":`), MsgRuntimeVersion},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := validStore(t)
			tt.apply(s.Layout().Root)
			assertRefused(t, s, tt.want)
		})
	}
}

// insert writes text after the first at in dir/name under the store root.
func insert(dir, name, at, text string) func(string) {
	return replace(dir, name, at, at+text)
}

// replace replaces the first old in dir/name under the store root by new.
func replace(dir, name, old, new string) func(string) {
	return func(r string) {
		p := filepath.Join(r, dir, name)
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), old) {
			panic(fmt.Sprintf("%s: %q not found (%v)", p, old, err))
		}
		os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o600)
	}
}
