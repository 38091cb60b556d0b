package contract_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/taskbar/contract"
)

const minimalTask = `{"prompt":"Explain the cards page.","context":{"contract_version":1,` +
	`"location":{"origin":"http://localhost:4000","path":"/cards","query_names":["page"]},"route":null,` +
	`"snapshot":{"tag":"main","name":"Cards","children":[{"tag":"h1","text":"Cards","children":[]}]},` +
	`"focus_points":[],"truncation":[]}}`

// taskWith returns minimalTask after edit, encoded without HTML escaping.
func taskWith(t testing.TB, edit func(task, ctx map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(minimalTask), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m, m["context"].(map[string]any))
	}
	return marshal(t, m)
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func node(tag string, children ...any) map[string]any {
	if children == nil {
		children = []any{}
	}
	return map[string]any{"tag": tag, "children": children}
}

// chain is a node tree of the given depth (root = 0).
func chain(depth int) map[string]any {
	n := node("div")
	for range depth {
		n = node("div", n)
	}
	return n
}

// flat is a root with n-1 children: n nodes, depth 1.
func flat(n int) map[string]any {
	var c []any
	for range n - 1 {
		c = append(c, node("p"))
	}
	return node("main", c...)
}

func focus(selector string) map[string]any {
	return map[string]any{
		"selector":  selector,
		"source":    map[string]any{"status": "unavailable", "references": []any{}},
		"ancestors": []any{map[string]any{"tag": "main"}},
		"subtree":   node("article"),
	}
}

func hint(status string, refs ...any) map[string]any {
	if refs == nil {
		refs = []any{}
	}
	return map[string]any{"status": status, "references": refs}
}

func ref(path string) map[string]any {
	return map[string]any{"role": "template", "path": path, "precision": "template"}
}

func TestParseTask_Rejects(t *testing.T) {
	valid := []byte(minimalTask)
	padded := append(bytes.Repeat([]byte(" "), contract.MaxRequestBytes-len(valid)), valid...)
	tests := []struct {
		name   string
		body   []byte
		code   string
		reason string // substring of Error.Reason
	}{
		{"over 128 KiB", append(padded, ' '), contract.CodeOversizedPayload, "131073 bytes"},
		{"invalid UTF-8", []byte(`{"prompt":"a` + "\xff" + `","context":{}}`), contract.CodeMalformedJSON, "UTF-8"},
		{"not JSON", []byte(`{"prompt":`), contract.CodeMalformedJSON, ""},
		{"empty body", nil, contract.CodeMalformedJSON, ""},
		{"trailing data", []byte(minimalTask + `{}`), contract.CodeMalformedJSON, ""},
		{"array", []byte(`[]`), contract.CodeMalformedJSON, "not a JSON object"},
		{"string", []byte(`"task"`), contract.CodeMalformedJSON, "not a JSON object"},
		{"duplicate top-level key", []byte(`{"prompt":"a","prompt":"b","context":{}}`), contract.CodeInvalidTask, "duplicate"},
		{"duplicate nested key", []byte(strings.Replace(minimalTask, `"path":"/cards"`, `"path":"/cards","path":"/x"`, 1)), contract.CodeInvalidTask, "duplicate"},
		{"contract_version 1.0", []byte(strings.Replace(minimalTask, `"contract_version":1`, `"contract_version":1.0`, 1)), contract.CodeInvalidTask, "/context/contract_version: expected an integer literal, got 1.0"},
		{"contract_version 1e0", []byte(strings.Replace(minimalTask, `"contract_version":1`, `"contract_version":1e0`, 1)), contract.CodeInvalidTask, "integer literal"},
		{"contract_version 2", []byte(strings.Replace(minimalTask, `"contract_version":1`, `"contract_version":2`, 1)), contract.CodeInvalidTask, "expected constant 1"},
		{"unknown task field", taskWith(t, func(task, _ map[string]any) { task["model"] = "x" }), contract.CodeInvalidTask, "unknown property model"},
		{"missing context", taskWith(t, func(task, _ map[string]any) { delete(task, "context") }), contract.CodeInvalidTask, "missing required property context"},
		{"prompt not a string", taskWith(t, func(task, _ map[string]any) { task["prompt"] = 1 }), contract.CodeInvalidTask, "/prompt: expected type string"},
		{"blank prompt", taskWith(t, func(task, _ map[string]any) { task["prompt"] = " \r\n\t\u3000" }), contract.CodeInvalidTask, "/prompt: expected at least 1 characters"},
		{"prompt over 4000 bytes", taskWith(t, func(task, _ map[string]any) { task["prompt"] = strings.Repeat("a", 4001) }), contract.CodeInvalidTask, "exceeds 4000 UTF-8 bytes"},
		{"prompt 1334 characters over 4000 bytes", taskWith(t, func(task, _ map[string]any) { task["prompt"] = strings.Repeat("€", 1334) }), contract.CodeInvalidTask, "exceeds 4000 UTF-8 bytes (got 4002)"},
		{"context over 96 KiB", taskWith(t, func(_, ctx map[string]any) {
			var fs []any
			for i := range 8 {
				f := focus(fmt.Sprint("#f", i))
				f["subtree"] = map[string]any{"tag": "p", "text": strings.Repeat("x", 1000), "children": []any{}}
				fs = append(fs, f)
			}
			ctx["focus_points"] = fs
			var kids []any
			for range 90 {
				kids = append(kids, map[string]any{"tag": "p", "text": strings.Repeat("y", 1000), "children": []any{}})
			}
			ctx["snapshot"] = node("main", kids...)
		}), contract.CodeInvalidTask, "/context/snapshot: JSON exceeds 49152 UTF-8 bytes"},
		{"snapshot depth 13", taskWith(t, func(_, ctx map[string]any) { ctx["snapshot"] = chain(13) }), contract.CodeInvalidTask, "/context/snapshot: tree exceeds depth 12"},
		{"snapshot 751 nodes", taskWith(t, func(_, ctx map[string]any) { ctx["snapshot"] = flat(751) }), contract.CodeInvalidTask, "tree exceeds 750 nodes"},
		{"focus subtree depth 7", taskWith(t, func(_, ctx map[string]any) {
			f := focus("#a")
			f["subtree"] = chain(7)
			ctx["focus_points"] = []any{f}
		}), contract.CodeInvalidTask, "/context/focus_points/0/subtree: tree exceeds depth 6"},
		{"focus subtree 101 nodes", taskWith(t, func(_, ctx map[string]any) {
			f := focus("#a")
			f["subtree"] = flat(101)
			ctx["focus_points"] = []any{f}
		}), contract.CodeInvalidTask, "tree exceeds 100 nodes"},
		{"nine focus points", taskWith(t, func(_, ctx map[string]any) {
			var fs []any
			for i := range 9 {
				fs = append(fs, focus(fmt.Sprint("#f", i)))
			}
			ctx["focus_points"] = fs
		}), contract.CodeInvalidTask, "expected at most 8 items"},
		{"selectors equal after normalization", taskWith(t, func(_, ctx map[string]any) {
			ctx["focus_points"] = []any{focus("#a  b"), focus(" #a\tb")}
		}), contract.CodeInvalidTask, "expected unique selector"},
		{"nine ancestors", taskWith(t, func(_, ctx map[string]any) {
			f := focus("#a")
			var as []any
			for range 9 {
				as = append(as, map[string]any{"tag": "div"})
			}
			f["ancestors"] = as
			ctx["focus_points"] = []any{f}
		}), contract.CodeInvalidTask, "ancestors: expected at most 8 items"},
		{"duplicate truncation section", taskWith(t, func(_, ctx map[string]any) {
			ctx["truncation"] = []any{
				map[string]any{"section": "page", "reasons": []any{"bytes"}},
				map[string]any{"section": "PAGE", "reasons": []any{"nodes"}},
			}
		}), contract.CodeInvalidTask, "/context/truncation/1: expected unique section"},
		{"truncation section focus:9", taskWith(t, func(_, ctx map[string]any) {
			ctx["truncation"] = []any{map[string]any{"section": "focus:9", "reasons": []any{"bytes"}}}
		}), contract.CodeInvalidTask, "does not match pattern"},
		{"truncation without reasons", taskWith(t, func(_, ctx map[string]any) {
			ctx["truncation"] = []any{map[string]any{"section": "page", "reasons": []any{}}}
		}), contract.CodeInvalidTask, "expected at least 1 items"},
		{"available hint without references", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available")
		}), contract.CodeInvalidTask, "source hint status available expects 1-2 references"},
		{"unavailable hint with a reference", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("unavailable", ref("app/views/a.html.erb"))
		}), contract.CodeInvalidTask, `source hint status "unavailable" expects no references`},
		{"traversing source path", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available", ref("app/../../etc/passwd"))
		}), contract.CodeInvalidTask, "invalid project path: dot segment"},
		{"dependency source path", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available", ref("deps/phoenix/lib/x.ex"))
		}), contract.CodeInvalidTask, "dependency-owned path"},
		{"absolute source path", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available", ref("/etc/passwd"))
		}), contract.CodeInvalidTask, "/context/snapshot/source/references/0/path: does not match pattern"},
		{"backslash source path", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available", ref(`app\views\a.erb`))
		}), contract.CodeInvalidTask, "does not match pattern"},
		{"drive letter source path", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available", ref("C:/x.erb"))
		}), contract.CodeInvalidTask, "does not match pattern"},
		{"line zero", taskWith(t, func(_, ctx map[string]any) {
			r := ref("lib/a.ex")
			r["line"] = 0
			ctx["snapshot"].(map[string]any)["source"] = hint("available", r)
		}), contract.CodeInvalidTask, "expected a number >= 1"},
		{"line 2.0", []byte(strings.Replace(string(taskWith(t, func(_, ctx map[string]any) {
			r := ref("lib/a.ex")
			r["line"] = 2
			ctx["snapshot"].(map[string]any)["source"] = hint("available", r)
		})), `"line":2`, `"line":2.0`, 1)), contract.CodeInvalidTask, "/context/snapshot/source/references/0/line: expected an integer literal, got 2.0"},
		{"origin port 0", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "http://localhost:0"
		}), contract.CodeInvalidTask, "invalid HTTP(S) origin: port is outside 1-65535"},
		{"origin bad IPv4", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "http://999.1.1.1"
		}), contract.CodeInvalidTask, "invalid HTTP(S) origin: host is not an IPv4 address"},
		{"origin bad label", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "http://-bad-.localhost"
		}), contract.CodeInvalidTask, "invalid HTTP(S) origin: host is not a DNS name"},
		{"origin trailing dot", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "http://localhost."
		}), contract.CodeInvalidTask, "invalid HTTP(S) origin"},
		{"origin with path", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "http://localhost/"
		}), contract.CodeInvalidTask, "does not match pattern"},
		{"origin ftp", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "ftp://localhost"
		}), contract.CodeInvalidTask, "does not match pattern"},
		{"href with credentials", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["href"] = map[string]any{"origin": "https://a:b@x.test", "path": "/", "query_names": []any{}}
		}), contract.CodeInvalidTask, "/context/snapshot/href/origin: invalid HTTP(S) origin: has userinfo"},
		{"arbitrary attribute", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["attributes"] = map[string]any{"onclick": "x()"}
		}), contract.CodeInvalidTask, "unknown property onclick"},
		{"unknown state", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["state"] = map[string]any{"checked": "maybe"}
		}), contract.CodeInvalidTask, "expected one of"},
		{"non-ASCII tag", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["tag"] = "dív"
		}), contract.CodeInvalidTask, "/context/snapshot/tag: does not match pattern"},
		{"whitespace-only class", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["classes"] = []any{" "}
		}), contract.CodeInvalidTask, "expected at least 1 characters"},
		{"classes equal after normalization", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["classes"] = []any{"a", "\u00a0a"}
		}), contract.CodeInvalidTask, "expected unique items"},
		{"route without action", taskWith(t, func(_, ctx map[string]any) {
			ctx["route"] = map[string]any{"method": "GET", "pattern": "/", "handler": "H"}
		}), contract.CodeInvalidTask, "missing required property action"},
		{"route method with digits", taskWith(t, func(_, ctx map[string]any) {
			ctx["route"] = map[string]any{"method": "GET2", "pattern": "/", "handler": "H", "action": nil}
		}), contract.CodeInvalidTask, "/context/route/method: does not match pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := contract.ParseTask(tt.body)
			if err == nil {
				t.Fatalf("accepted: %s", task.Envelope())
			}
			var e *contract.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *contract.Error", err, err)
			}
			want := map[string]*contract.Error{
				contract.CodeOversizedPayload: contract.ErrOversizedPayload,
				contract.CodeMalformedJSON:    contract.ErrMalformedJSON,
				contract.CodeInvalidTask:      contract.ErrInvalidTask,
			}[tt.code]
			if e.Code != tt.code || e.Status != want.Status || e.Message != want.Message || !errors.Is(err, want) {
				t.Errorf("got %s %d %q, want %s %d %q", e.Code, e.Status, e.Message, tt.code, want.Status, want.Message)
			}
			if !strings.Contains(e.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", e.Reason, tt.reason)
			}
			// The error text shown or logged never carries the detail.
			if e.Reason != "" && strings.Contains(err.Error(), e.Reason) {
				t.Errorf("Error() %q leaks the reason", err.Error())
			}
		})
	}
}

func TestParseTask_StatusCodes(t *testing.T) {
	for _, tt := range []struct {
		err    *contract.Error
		status int
	}{
		{contract.ErrOversizedPayload, http.StatusRequestEntityTooLarge},
		{contract.ErrMalformedJSON, http.StatusBadRequest},
		{contract.ErrInvalidTask, http.StatusUnprocessableEntity},
	} {
		if tt.err.Status != tt.status {
			t.Errorf("%s: status %d, want %d", tt.err.Code, tt.err.Status, tt.status)
		}
	}
	if contract.ErrInvalidTask.Message != "Task request is invalid" {
		t.Errorf("invalid_task message %q", contract.ErrInvalidTask.Message)
	}
}

func TestParseTask_Accepts(t *testing.T) {
	valid := []byte(minimalTask)
	padded := append(bytes.Repeat([]byte(" "), contract.MaxRequestBytes-len(valid)), valid...)
	tests := []struct {
		name string
		body []byte
	}{
		{"exactly 128 KiB", padded},
		{"prompt of 4000 bytes", taskWith(t, func(task, _ map[string]any) { task["prompt"] = strings.Repeat("é", 2000) })},
		{"prompt of 4000 bytes after trimming", taskWith(t, func(task, _ map[string]any) { task["prompt"] = "\n  " + strings.Repeat("a", 4000) + " \r\n" })},
		{"snapshot depth 12", taskWith(t, func(_, ctx map[string]any) { ctx["snapshot"] = chain(12) })},
		{"snapshot 750 nodes", taskWith(t, func(_, ctx map[string]any) { ctx["snapshot"] = flat(750) })},
		{"eight focus points with 100-node subtrees", taskWith(t, func(_, ctx map[string]any) {
			var fs []any
			for i := range 8 {
				f := focus(fmt.Sprint("#f", i))
				f["subtree"] = flat(100)
				fs = append(fs, f)
			}
			ctx["focus_points"] = fs
		})},
		{"IPv6 origin", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "http://[::1]:4000"
		})},
		{"IPv4 origin", taskWith(t, func(_, ctx map[string]any) {
			ctx["location"].(map[string]any)["origin"] = "https://127.0.0.1:65535"
		})},
		{"route with null action", taskWith(t, func(_, ctx map[string]any) {
			ctx["route"] = map[string]any{"method": "POST", "pattern": "/cards", "handler": "CardsController", "action": nil}
		})},
		{"available hint with symbol and line", taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available",
				map[string]any{"role": "definition", "path": "lib/a.ex", "line": 12, "symbol": "A.b", "precision": "line"},
				map[string]any{"role": "caller", "path": "lib/b.ex", "line": 1, "precision": "line"})
		})},
		{"large line number", []byte(strings.Replace(string(taskWith(t, func(_, ctx map[string]any) {
			r := ref("lib/a.ex")
			r["line"] = 7
			ctx["snapshot"].(map[string]any)["source"] = hint("available", r)
		})), `"line":7`, `"line":123456789012345678901234567890`, 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := contract.ParseTask(tt.body); err != nil {
				t.Fatalf("rejected: %v (%s)", err, reason(err))
			}
		})
	}
}

func reason(err error) string {
	var e *contract.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// canonicalContext decodes the context part of an envelope.
func contextOf(t *testing.T, task *contract.Task) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(task.Context.CanonicalJSON(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseTask_Normalizes(t *testing.T) {
	body := taskWith(t, func(task, ctx map[string]any) {
		task["prompt"] = "\u00a0\r\n\tFix   the\r\nbutton\u202e.\u0007\t \n"
		ctx["location"] = map[string]any{"origin": " http://localhost:4000 ", "path": "/caf\u0065\u0301s", "query_names": []any{" page ", "q\u2028x"}}
		ctx["route"] = map[string]any{"method": " get ", "pattern": "/cards/:id", "handler": "  Cards\r\n", "action": "  "}
		ctx["snapshot"] = map[string]any{
			"tag":        " MAIN ",
			"role":       "",
			"name":       "  Cards \t list ",
			"text":       "\u202c\u2069 \u0085",
			"id":         "",
			"classes":    []any{},
			"attributes": map[string]any{"name": "", "type": " "},
			"state":      map[string]any{"checked": " MIXED ", "disabled": true},
			"children": []any{map[string]any{
				"tag": "H1", "text": "Ca\r\nrds", "classes": []any{"a\tb"}, "children": []any{},
				"source": hint(" AVAILABLE ", map[string]any{"role": "Template", "path": " app/views/a.html.erb ", "precision": "TEMPLATE"}),
			}},
		}
		f := focus("  [data-testid=\"c\"]  ")
		f["ancestors"] = []any{map[string]any{"tag": "BODY", "name": "", "role": " main "}}
		f["source"] = hint("External")
		ctx["focus_points"] = []any{f}
		ctx["truncation"] = []any{
			map[string]any{"section": "focus:1", "reasons": []any{"string", "BYTES"}},
			map[string]any{"section": " Page ", "reasons": []any{"depth", "nodes"}},
		}
	})
	task, err := contract.ParseTask(body)
	if err != nil {
		t.Fatalf("rejected: %v (%s)", err, reason(err))
	}
	if want := "Fix   the\nbutton."; task.Prompt != want {
		t.Errorf("prompt %q, want %q", task.Prompt, want)
	}
	want := map[string]any{
		"contract_version": 1.0,
		"location":         map[string]any{"origin": "http://localhost:4000", "path": "/caf\u00e9s", "query_names": []any{"page", "q x"}},
		"route":            map[string]any{"method": "GET", "pattern": "/cards/:id", "handler": "Cards", "action": nil},
		"snapshot": map[string]any{
			"tag":   "main",
			"name":  "Cards list",
			"state": map[string]any{"checked": "mixed", "disabled": true},
			"children": []any{map[string]any{
				"tag": "h1", "text": "Ca rds", "classes": []any{"a b"}, "children": []any{},
				"source": map[string]any{"status": "available", "references": []any{map[string]any{"role": "template", "path": "app/views/a.html.erb", "precision": "template"}}},
			}},
		},
		"focus_points": []any{map[string]any{
			"selector":  `[data-testid="c"]`,
			"source":    map[string]any{"status": "external", "references": []any{}},
			"ancestors": []any{map[string]any{"tag": "body", "role": "main"}},
			"subtree":   map[string]any{"tag": "article", "children": []any{}},
		}},
		"truncation": []any{
			map[string]any{"section": "page", "reasons": []any{"nodes", "depth"}},
			map[string]any{"section": "focus:1", "reasons": []any{"bytes", "string"}},
		},
	}
	if diff := cmp.Diff(want, contextOf(t, task)); diff != "" {
		t.Errorf("normalized context (-want +got):\n%s", diff)
	}
	// A normalized task is a fixed point.
	again, err := task.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	task2, err := contract.ParseTask(again)
	if err != nil {
		t.Fatalf("re-parse rejected: %s", reason(err))
	}
	if !bytes.Equal(task2.Envelope(), task.Envelope()) {
		t.Error("normalizing a normalized task changed it")
	}
}

func TestTask_Envelope(t *testing.T) {
	body := taskWith(t, func(task, ctx map[string]any) {
		task["prompt"] = "Make <b>this</b> & that\nwork."
		ctx["snapshot"].(map[string]any)["text"] = `"quoted" \ <script>&amp;</script> ü`
	})
	task, err := contract.ParseTask(body)
	if err != nil {
		t.Fatalf("rejected: %s", reason(err))
	}
	want := "Make <b>this</b> & that\nwork.\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n" +
		`{"contract_version":1,"focus_points":[],"location":{"origin":"http://localhost:4000","path":"/cards","query_names":["page"]},"route":null,` +
		`"snapshot":{"children":[{"children":[],"tag":"h1","text":"Cards"}],"name":"Cards","tag":"main","text":"\"quoted\" \\ \u003cscript\u003e\u0026amp;\u003c/script\u003e ü"},"truncation":[]}` +
		"\n--- END UNTRUSTED BROWSER CONTEXT ---"
	if got := string(task.Envelope()); got != want {
		t.Errorf("envelope:\n%s\nwant:\n%s", got, want)
	}
}

// TestParseTask_Concurrent shares the default validator between goroutines
// (run with -race).
func TestParseTask_Concurrent(t *testing.T) {
	bodies := [][]byte{
		[]byte(minimalTask),
		taskWith(t, func(_, ctx map[string]any) {
			ctx["snapshot"].(map[string]any)["source"] = hint("available", ref("lib/a/b.ex"))
		}),
		taskWith(t, func(_, ctx map[string]any) { ctx["snapshot"] = flat(751) }),
	}
	want := make([]string, len(bodies))
	for i, b := range bodies {
		task, err := contract.ParseTask(b)
		if err == nil {
			want[i] = string(task.Envelope())
		} else {
			want[i] = reason(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				k := (g + i) % len(bodies)
				task, err := contract.ParseTask(bodies[k])
				got := reason(err)
				if err == nil {
					got = string(task.Envelope())
				}
				if got != want[k] {
					t.Errorf("goroutine %d body %d: got %q, want %q", g, k, got, want[k])
				}
			}
		})
	}
	wg.Wait()
}

func TestNewTask(t *testing.T) {
	var task map[string]json.RawMessage
	if err := json.Unmarshal([]byte(minimalTask), &task); err != nil {
		t.Fatal(err)
	}
	got, err := contract.NewTask("  Explain the cards page.\r\n", task["context"])
	if err != nil {
		t.Fatalf("rejected: %s", reason(err))
	}
	parsed, err := contract.ParseTask([]byte(minimalTask))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Envelope(), parsed.Envelope()) {
		t.Errorf("NewTask envelope differs from ParseTask's:\n%s\n%s", got.Envelope(), parsed.Envelope())
	}
	if _, err := contract.NewTask("bad \xff", task["context"]); !errors.Is(err, contract.ErrInvalidTask) {
		t.Errorf("invalid UTF-8 prompt: got %v, want invalid_task", err)
	}
}

func TestNormalizeContext(t *testing.T) {
	var task map[string]json.RawMessage
	if err := json.Unmarshal([]byte(minimalTask), &task); err != nil {
		t.Fatal(err)
	}
	c, err := contract.NormalizeContext(task["context"])
	if err != nil {
		t.Fatalf("rejected: %s", reason(err))
	}
	if c.FocusPoints() != 0 {
		t.Errorf("FocusPoints() = %d, want 0", c.FocusPoints())
	}
	if c.Size() != len(c.CanonicalJSON()) { // no < > & in this context
		t.Errorf("Size() = %d, canonical JSON is %d bytes", c.Size(), len(c.CanonicalJSON()))
	}
	if _, err := contract.NormalizeContext([]byte(`{"contract_version":1}`)); !errors.Is(err, contract.ErrInvalidTask) {
		t.Errorf("incomplete context: got %v, want invalid_task", err)
	}
}

// TestTask_JSON: a Task in a wire struct round-trips through encoding/json
// and is validated on decode.
func TestTask_JSON(t *testing.T) {
	type submit struct {
		Type string         `json:"type"`
		Task *contract.Task `json:"task"`
	}
	task, err := contract.ParseTask([]byte(minimalTask))
	if err != nil {
		t.Fatal(err)
	}
	wire, err := json.Marshal(submit{Type: "submit", Task: task})
	if err != nil {
		t.Fatal(err)
	}
	var got submit
	if err := json.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	if got.Task.Prompt != task.Prompt || !bytes.Equal(got.Task.Envelope(), task.Envelope()) {
		t.Errorf("round trip changed the task: %+v", got.Task)
	}
	bad := bytes.Replace(wire, []byte(`"contract_version":1`), []byte(`"contract_version":1.0`), 1)
	if err := json.Unmarshal(bad, &got); !errors.Is(err, contract.ErrInvalidTask) {
		t.Errorf("decoding an invalid task: got %v, want invalid_task", err)
	}
	var c contract.Context
	if err := json.Unmarshal(task.Context.CanonicalJSON(), &c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.CanonicalJSON(), task.Context.CanonicalJSON()) {
		t.Error("context round trip changed it")
	}
}

func TestZeroValues_MarshalJSON(t *testing.T) {
	got, err := json.Marshal(contract.Task{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"context":null,"prompt":"p"}`; string(got) != want {
		t.Errorf("zero-context task marshals to %s, want %s", got, want)
	}
	if _, err := contract.ParseTask(got); !errors.Is(err, contract.ErrInvalidTask) {
		t.Errorf("zero-context task re-parses with %v, want invalid_task", err)
	}
}

// deepest returns the last node of a chain.
func deepest(n map[string]any) map[string]any {
	for {
		kids := n["children"].([]any)
		if len(kids) == 0 {
			return n
		}
		n = kids[0].(map[string]any)
	}
}

// nested is n arrays around v.
func nested(n int, v string) string {
	return strings.Repeat("[", n) + v + strings.Repeat("]", n)
}

// Deep nesting is the classic parser DoS (json-smart CVE-2023-1370,
// netplex/json-smart-v2#131; open-source-parsers/jsoncpp#1359). The decoder
// stops building below the deepest nesting a valid request can reach, yet
// malformed_json still wins over invalid_task as it did without the bound.
func TestParseTask_NestingBound(t *testing.T) {
	deepValid := taskWith(t, func(_, ctx map[string]any) {
		snap := chain(12)
		deepest(snap)["source"] = hint("available", ref("lib/a.ex"))
		deepest(snap)["href"] = map[string]any{"origin": "http://localhost:4000", "path": "/", "query_names": []any{"q"}}
		ctx["snapshot"] = snap
		f := focus("#f")
		f["subtree"] = chain(6)
		deepest(f["subtree"].(map[string]any))["source"] = hint("available", ref("lib/b.ex"))
		ctx["focus_points"] = []any{f}
	})
	if _, err := contract.ParseTask(deepValid); err != nil {
		t.Fatalf("deepest valid request rejected: %v (%s)", err, reason(err))
	}
	ctxWith := func(v string) []byte {
		return []byte(strings.Replace(minimalTask, `"truncation":[]`, `"truncation":`+v, 1))
	}
	tests := []struct {
		name   string
		body   []byte
		code   string
		reason string
	}{
		{"5000 arrays in the context", ctxWith(nested(5000, "")), contract.CodeInvalidTask, "nesting exceeds depth"},
		{"9000 objects as the prompt", []byte(`{"context":{},"prompt":` + strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000) + `}`), contract.CodeInvalidTask, "nesting exceeds depth"},
		{"snapshot chain of depth 40", taskWith(t, func(_, ctx map[string]any) { ctx["snapshot"] = chain(40) }), contract.CodeInvalidTask, "nesting exceeds depth"},
		{"deep arrays then a syntax error", ctxWith(nested(5000, "") + `,}`), contract.CodeMalformedJSON, ""},
		{"deep arrays with a bad literal inside", ctxWith(nested(5000, "nul")), contract.CodeMalformedJSON, ""},
		{"deep arrays then trailing data", append(ctxWith(nested(5000, "")), `{}`...), contract.CodeMalformedJSON, ""},
		{"top-level deep array", []byte(nested(5000, "")), contract.CodeMalformedJSON, "not a JSON object"},
		{"beyond the tokenizer limit", ctxWith(nested(10001, "")), contract.CodeMalformedJSON, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := contract.ParseTask(tt.body)
			var ce *contract.Error
			if !errors.As(err, &ce) || ce.Code != tt.code || !strings.Contains(ce.Reason, tt.reason) {
				t.Fatalf("got %v (%s), want %s containing %q", err, reason(err), tt.code, tt.reason)
			}
		})
	}
	t.Run("NewTask and NormalizeContext", func(t *testing.T) {
		doc := `{"contract_version":1,"truncation":` + nested(5000, "") + `}`
		for _, err := range []error{
			func() error { _, err := contract.NewTask("x", []byte(doc)); return err }(),
			func() error { _, err := contract.NormalizeContext([]byte(doc)); return err }(),
		} {
			var ce *contract.Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "nesting exceeds depth") {
				t.Errorf("got %v (%s), want the nesting bound", err, reason(err))
			}
		}
	})
	t.Run("work does not grow with the nesting", func(t *testing.T) {
		shallow, deep := ctxWith(nested(100, "")), ctxWith(nested(9000, ""))
		a := testing.AllocsPerRun(5, func() { _, _ = contract.ParseTask(shallow) })
		b := testing.AllocsPerRun(5, func() { _, _ = contract.ParseTask(deep) })
		if b > a+16 {
			t.Errorf("allocations: %v at depth 9000, %v at depth 100", b, a)
		}
	})
}

// Odd but real bodies: each keeps the code it gets today (hardening pass).
func TestParseTask_OddInputs(t *testing.T) {
	r := func(a, b string) []byte { return []byte(strings.Replace(minimalTask, a, b, 1)) }
	tests := []struct {
		name, code, prompt string // code "" accepts with prompt
	}{
		{"BOM before the object", contract.CodeMalformedJSON, ""},
		{"escaped NUL in the prompt is stripped", "", "Explain the cards page."},
		{"raw NUL in a string", contract.CodeMalformedJSON, ""},
		{"escaped lone high surrogate", contract.CodeMalformedJSON, ""},
		{"escaped lone low surrogate", contract.CodeMalformedJSON, ""},
		{"escaped surrogate pair", "", "\U0001F600Explain the cards page."},
		{"U+2028 at the prompt start is trimmed", "", "Explain the cards page."},
		{"decomposed prompt is NFC", "", "\u00e9Explain the cards page."},
		{"prompt of only NUL", contract.CodeInvalidTask, ""},
		{"escaped member name", "", "Explain the cards page."},
		{"duplicate via escaped member name", contract.CodeInvalidTask, ""},
		{"member name with BOM", contract.CodeInvalidTask, ""},
		{"contract_version -0", contract.CodeInvalidTask, ""},
		{"contract_version 1e2", contract.CodeInvalidTask, ""},
		{"contract_version 01", contract.CodeMalformedJSON, ""},
		{"contract_version 1 then 400 zeros", contract.CodeInvalidTask, ""},
		{"contract_version NaN", contract.CodeMalformedJSON, ""},
	}
	bodies := map[string][]byte{
		"BOM before the object":                 append([]byte("\xef\xbb\xbf"), minimalTask...),
		"escaped NUL in the prompt is stripped": r(`"Explain`, `"\u0000Explain`),
		"raw NUL in a string":                   r(`"Explain`, "\"\x00Explain"),
		"escaped lone high surrogate":           r(`"Explain`, `"\ud800Explain`),
		"escaped lone low surrogate":            r(`"Explain`, `"\udc00Explain`),
		"escaped surrogate pair":                r(`"Explain`, `"\ud83d\ude00Explain`),
		"U+2028 at the prompt start is trimmed": r(`"Explain`, "\"\u2028Explain"),
		"decomposed prompt is NFC":              r(`"Explain`, "\"e\u0301Explain"),
		"prompt of only NUL":                    r(`"Explain the cards page."`, `"\u0000"`),
		"escaped member name":                   r(`"prompt"`, `"\u0070rompt"`),
		"duplicate via escaped member name":     r(`"prompt":"Explain the cards page.",`, `"prompt":"a","\u0070rompt":"b",`),
		"member name with BOM":                  r(`"prompt"`, "\"\ufeffprompt\""),
		"contract_version -0":                   r(`"contract_version":1`, `"contract_version":-0`),
		"contract_version 1e2":                  r(`"contract_version":1`, `"contract_version":1e2`),
		"contract_version 01":                   r(`"contract_version":1`, `"contract_version":01`),
		"contract_version 1 then 400 zeros":     r(`"contract_version":1`, `"contract_version":1`+strings.Repeat("0", 400)),
		"contract_version NaN":                  r(`"contract_version":1`, `"contract_version":NaN`),
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := contract.ParseTask(bodies[tt.name])
			if tt.code == "" {
				if err != nil {
					t.Fatalf("rejected: %v (%s)", err, reason(err))
				}
				if task.Prompt != tt.prompt {
					t.Fatalf("prompt %q, want %q", task.Prompt, tt.prompt)
				}
				return
			}
			var ce *contract.Error
			if !errors.As(err, &ce) || ce.Code != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
}
