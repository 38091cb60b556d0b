package modelserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
)

func TestMain(m *testing.M) { pitest.Main(m) }

const piBody = `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":1024,
"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"%s"}]}],
"tools":[{"type":"function","function":{"name":"bash","description":"d","parameters":{}}}]}`

func serve(t *testing.T, script modelserver.ScriptFunc) (*modelserver.Server, *httptest.Server) {
	t.Helper()
	s := modelserver.New(script)
	hs := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); hs.Close() })
	return s, hs
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer fake-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// frames reads SSE data payloads until [DONE] or EOF.
func frames(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		out = append(out, data)
		if data == "[DONE]" {
			break
		}
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func decode(t *testing.T, fs []string) []chunk {
	t.Helper()
	if len(fs) == 0 || fs[len(fs)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", fs)
	}
	var out []chunk
	for _, f := range fs[:len(fs)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(f), &c); err != nil {
			t.Fatalf("chunk %q: %v", f, err)
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" {
			t.Errorf("chunk header %+v", c)
		}
		out = append(out, c)
	}
	return out
}

func TestServer_TextStream(t *testing.T) {
	s, hs := serve(t, modelserver.Reply("Hello there friend"))
	resp := post(t, t.Context(), hs.URL, strings.Replace(piBody, "%s", "Say hello.", 1))
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	cs := decode(t, frames(t, resp.Body))
	if len(cs) != 6 {
		t.Fatalf("%d chunks, want role + 3 deltas + finish + usage", len(cs))
	}
	if cs[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %+v, want the role", cs[0])
	}
	var text string
	for _, c := range cs[1:4] {
		text += *c.Choices[0].Delta.Content
	}
	if text != "Hello there friend" {
		t.Errorf("text %q", text)
	}
	if f := cs[4].Choices[0].FinishReason; f == nil || *f != "stop" {
		t.Errorf("finish %v", f)
	}
	if u := cs[5].Usage; u == nil || len(cs[5].Choices) != 0 || u.PromptTokens != 10 || u.CompletionTokens != 3 {
		t.Errorf("usage chunk %+v", cs[5])
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	got := []string{r.Model, r.LastUserText(), r.Last().Role, r.Header.Get("Authorization"), strings.Join(r.Tools, ",")}
	want := []string{"fake-model", "Say hello.", "user", "Bearer fake-key", "bash"}
	if diff := cmp.Diff(want, got); diff != "" || !r.Stream {
		t.Errorf("recorded request (-want +got):\n%s", diff)
	}
}

func TestServer_ToolCall(t *testing.T) {
	_, hs := serve(t, func(*modelserver.Request) modelserver.Script {
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: "bash", Arguments: []string{`{"command":`, `"ls"}`}}}}
	})
	cs := decode(t, frames(t, post(t, t.Context(), hs.URL, strings.Replace(piBody, "%s", "x", 1)).Body))
	head := cs[1].Choices[0].Delta.ToolCalls
	if len(head) != 1 || head[0].ID != "call_1" || head[0].Type != "function" || head[0].Function.Name != "bash" {
		t.Fatalf("tool call head %+v", head)
	}
	args := cs[2].Choices[0].Delta.ToolCalls[0].Function.Arguments + cs[3].Choices[0].Delta.ToolCalls[0].Function.Arguments
	if !json.Valid([]byte(args)) || args != `{"command":"ls"}` {
		t.Errorf("arguments %q", args)
	}
	if f := cs[4].Choices[0].FinishReason; f == nil || *f != "tool_calls" {
		t.Errorf("finish %v", f)
	}
}

func TestServer_HTTPError(t *testing.T) {
	_, hs := serve(t, func(*modelserver.Request) modelserver.Script {
		return modelserver.Script{Status: 500, Body: `{"message":"fake upstream overloaded","type":"server_error"}`}
	})
	resp := post(t, t.Context(), hs.URL, strings.Replace(piBody, "%s", "x", 1))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/json" || !json.Valid(b) {
		t.Errorf("status %d, body %q", resp.StatusCode, b)
	}
}

func TestServer_BadRequests(t *testing.T) {
	_, hs := serve(t, nil)
	if resp := post(t, t.Context(), hs.URL, "{nope"); resp.StatusCode != 400 {
		t.Errorf("bad JSON: status %d", resp.StatusCode)
	}
	resp, err := http.Get(hs.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d", resp.StatusCode)
	}
}

func TestServer_HangEndsWhenClientLeavesOrServerCloses(t *testing.T) {
	hang := func(*modelserver.Request) modelserver.Script {
		return modelserver.Script{Text: []string{"partial"}, Hang: true, Delay: time.Millisecond}
	}
	t.Run("client leaves", func(t *testing.T) {
		_, hs := serve(t, hang)
		ctx, cancel := context.WithCancel(t.Context())
		resp := post(t, ctx, hs.URL, strings.Replace(piBody, "%s", "x", 1))
		readUntilPartial(t, bufio.NewReader(resp.Body))
		cancel()
		// hs.Close at cleanup waits for the handler: it must have returned.
	})
	t.Run("server closes", func(t *testing.T) {
		s, hs := serve(t, hang)
		resp := post(t, t.Context(), hs.URL, strings.Replace(piBody, "%s", "x", 1))
		br := bufio.NewReader(resp.Body)
		readUntilPartial(t, br)
		s.Close()
		if fs := frames(t, br); len(fs) != 0 { // EOF, no finish, no [DONE]
			t.Errorf("frames after close %q, want none", fs)
		}
		if resp := post(t, t.Context(), hs.URL, strings.Replace(piBody, "%s", "x", 1)); resp.StatusCode != 503 {
			t.Errorf("after Close: status %d", resp.StatusCode)
		}
	})
}

func readUntilPartial(t *testing.T, br *bufio.Reader) {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "partial") {
			return
		}
	}
}

func TestSwitch(t *testing.T) {
	a, b, fb := modelserver.Script{Text: []string{"a"}}, modelserver.Script{Text: []string{"b"}}, modelserver.Script{Text: []string{"fallback"}}
	sw := modelserver.Switch(fb, modelserver.Case{Contains: "ALPHA", Script: a}, modelserver.Case{Contains: "BETA", Script: b})
	msg := func(role, content string) modelserver.Message {
		c, _ := json.Marshal(content)
		return modelserver.Message{Role: role, Content: c}
	}
	tests := []struct {
		name string
		msgs []modelserver.Message
		want string
	}{
		{"first case", []modelserver.Message{msg("user", "say ALPHA")}, "a"},
		{"second case", []modelserver.Message{msg("user", "BETA")}, "b"},
		{"no match", []modelserver.Message{msg("user", "gamma")}, "fallback"},
		{"after a tool result", []modelserver.Message{msg("user", "ALPHA"), msg("tool", "out")}, "fallback"},
		{"empty", nil, "fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sw(&modelserver.Request{Messages: tt.msgs}).Text[0]; got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	got := modelserver.Words("Hello from  the model")
	if diff := cmp.Diff([]string{"Hello ", "from ", " ", "the ", "model"}, got); diff != "" {
		t.Error(diff)
	}
	if strings.Join(got, "") != "Hello from  the model" {
		t.Error("words do not join back")
	}
}

// FuzzServer: any body gets a 200 stream or a 4xx JSON error, never a panic,
// and every parsed request is recorded.
func FuzzServer(f *testing.F) {
	f.Add([]byte(strings.Replace(piBody, "%s", "hi", 1)))
	f.Add([]byte(`{"messages":[{"role":"user","content":"x"},{"role":"tool","content":null}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"image"}]}],"tools":[{}]}`))
	f.Add([]byte(`[]`))
	s := modelserver.New(modelserver.Switch(modelserver.Script{Text: []string{"x"}},
		modelserver.Case{Contains: "tool", Script: modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: "bash", Arguments: []string{"{}"}}}}}))
	f.Fuzz(func(t *testing.T, body []byte) {
		before := len(s.Requests())
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(body)))
		switch rec.Code {
		case 200:
			if !strings.HasSuffix(rec.Body.String(), "data: [DONE]\n\n") || len(s.Requests()) != before+1 {
				t.Fatalf("200 without a complete stream or record")
			}
		case 400:
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("400 body not JSON")
			}
		default:
			t.Fatalf("status %d", rec.Code)
		}
	})
}
