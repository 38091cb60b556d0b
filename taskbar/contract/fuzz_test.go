package contract

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

const fuzzMinimalContext = `{"contract_version":1,"location":{"origin":"http://localhost:4000","path":"/cards","query_names":["page"]},` +
	`"route":null,"snapshot":{"tag":"main","name":"Cards","children":[{"tag":"h1","text":"Cards","children":[]}]},"focus_points":[],"truncation":[]}`

// contractSeeds returns the contract's browser-context and task fixtures
// when the shared directory is present.
func contractSeeds(f *testing.F) (contexts, tasks [][]byte) {
	dir, err := FindContractDir(".")
	if err != nil {
		return nil, nil
	}
	for _, sub := range []string{"browser-context", "tasks"} {
		files, _ := filepath.Glob(filepath.Join(dir, "fixtures", sub, "*.json"))
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			if sub == "tasks" {
				tasks = append(tasks, data)
			} else {
				contexts = append(contexts, data)
			}
		}
	}
	return contexts, tasks
}

func wrapTask(prompt string, context []byte) []byte {
	return []byte(`{"prompt":` + string(appendString(nil, prompt, false)) + `,"context":` + string(context) + `}`)
}

// checkError asserts the shape of every rejection: an *Error with one of the
// three codes, its fixed status and message.
func checkError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not *Error: %v", err, err)
	}
	for _, s := range []*Error{ErrOversizedPayload, ErrMalformedJSON, ErrInvalidTask} {
		if e.Code == s.Code {
			if e.Status != s.Status || e.Message != s.Message {
				t.Fatalf("%s with status %d message %q", e.Code, e.Status, e.Message)
			}
			return
		}
	}
	t.Fatalf("unknown code %q", e.Code)
}

// checkRenormalize asserts that normalization is idempotent on any decodable
// document, accepted or not.
func checkRenormalize(t *testing.T, data []byte, normalize func(map[string]any)) {
	t.Helper()
	if !utf8.Valid(data) {
		return
	}
	v, err := decodeJSON(data)
	if err != nil {
		return
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return
	}
	normalize(doc)
	once := appendCanonical(nil, doc, true)
	v2, err := decodeJSON(once)
	if err != nil {
		t.Fatalf("canonical form does not parse: %v", err)
	}
	normalize(v2.(map[string]any))
	if twice := appendCanonical(nil, v2, true); !bytes.Equal(once, twice) {
		t.Fatalf("normalization not idempotent:\n%s\n%s", once, twice)
	}
}

// checkEnvelope asserts the envelope frames the prompt and canonical JSON
// that parses back to the normalized context.
func checkEnvelope(t *testing.T, task *Task) {
	t.Helper()
	env := task.Envelope()
	head := task.Prompt + envelopeBegin
	if !bytes.HasPrefix(env, []byte(head)) || !bytes.HasSuffix(env, []byte(envelopeEnd)) {
		t.Fatalf("envelope framing broken: %q", env)
	}
	body := env[len(head) : len(env)-len(envelopeEnd)]
	if bytes.ContainsAny(body, "<>&\n") {
		t.Fatalf("envelope JSON has raw < > & or a newline: %s", body)
	}
	back, err := decodeJSON(body)
	if err != nil {
		t.Fatalf("envelope JSON does not parse: %v", err)
	}
	if !reflect.DeepEqual(back, any(task.Context.tree)) {
		t.Fatalf("envelope JSON does not parse back to the context")
	}
}

func FuzzParseTask(f *testing.F) {
	contexts, tasks := contractSeeds(f)
	for _, c := range append(contexts, []byte(fuzzMinimalContext)) {
		f.Add(wrapTask("Explain the cards page.", c))
	}
	for _, t := range tasks {
		f.Add(t)
	}
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `{"prompt":"a","prompt":"b"}`, `{"prompt":"a"}{}`, "{\"prompt\":\"\xff\"}",
		strings.Replace(string(wrapTask(" x ", []byte(fuzzMinimalContext))), `"contract_version":1`, `"contract_version":1.0`, 1),
		`{"prompt":"x","context":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		`{"prompt":"x","context":` + strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40) + `}`,
		`{"prompt":"\ud800","context":{}}`, "\ufeff{}",
	} {
		f.Add([]byte(s))
	}
	v := DefaultValidator()
	f.Fuzz(func(t *testing.T, body []byte) {
		checkRenormalize(t, body, normalizeTask)
		task, err := v.ParseTask(body)
		if err != nil {
			checkError(t, err)
			return
		}
		// Accepted: the canonical request re-validates to the same task.
		again, err := task.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		task2, err := v.ParseTask(again)
		if err != nil {
			t.Fatalf("canonical request rejected: %s", err.(*Error).Reason)
		}
		if task2.Prompt != task.Prompt || !bytes.Equal(task2.Context.canonical, task.Context.canonical) {
			t.Fatalf("round trip changed the task")
		}
		checkEnvelope(t, task)
	})
}

func FuzzNormalizeContext(f *testing.F) {
	contexts, _ := contractSeeds(f)
	for _, c := range append(contexts, []byte(fuzzMinimalContext)) {
		f.Add(c)
	}
	v := DefaultValidator()
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRenormalize(t, data, func(m map[string]any) { normalizeContext(m) })
		c, err := v.NormalizeContext(data)
		if err != nil {
			checkError(t, err)
			return
		}
		c2, err := v.NormalizeContext(c.canonical)
		if err != nil {
			t.Fatalf("canonical context rejected: %s", err.(*Error).Reason)
		}
		if !bytes.Equal(c.canonical, c2.canonical) {
			t.Fatalf("canonical context changed:\n%s\n%s", c.canonical, c2.canonical)
		}
		if n := jsonSize(c.tree); n > 98304 {
			t.Fatalf("accepted a %d-byte context", n)
		}
		checkEnvelope(t, &Task{Prompt: "p", Context: *c})
	})
}

func FuzzNormalizeString(f *testing.F) {
	for _, s := range []string{"", "Cards", " a\r\n\tb ", "e\u202e\u0301", "\u00a0\u2028x\u3000", "ſet", "İ", "\u0345"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // decodeDocument rejects invalid UTF-8 before normalization
		}
		for name, fn := range map[string]func(string) string{
			"text":       normalizeText,
			"structural": normalizeStructural,
			"prompt":     NormalizePrompt,
			"lower":      func(s string) string { return fold(s, strings.ToLower).(string) },
			"upper":      func(s string) string { return fold(s, strings.ToUpper).(string) },
		} {
			once := fn(s)
			if twice := fn(once); twice != once {
				t.Fatalf("%s not idempotent: %q -> %q -> %q", name, s, once, twice)
			}
		}
	})
}
