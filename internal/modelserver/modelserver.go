// Package modelserver is a scripted OpenAI-compatible chat completions server:
// the model Pi talks to in offline tests and in the offline demo.
//
// # Wire
//
// It serves `POST /v1/chat/completions` the way Pi 1.6.0 uses it (reference
// §5.3): a 200 `text/event-stream` of `data: <chunk>\n\n` frames (role delta,
// content deltas, tool call deltas with argument fragments, a finish_reason
// chunk, a usage chunk) ending with `data: [DONE]`, or an HTTP error with a
// JSON body. Pi sends stream:true; a non-streaming request gets the same
// stream.
//
// # Scripts
//
// A [ScriptFunc] picks the [Script] for each request, so one server serves
// many tests (e.g. [Switch] matches on the last user message). Every request
// is recorded ([Server.Requests]) so tests can assert what Pi sent.
//
// # Example
//
//	srv := modelserver.New(modelserver.Reply("Hello from the fake model."))
//	defer srv.Close()
//	hs := httptest.NewServer(srv) // on 127.0.0.1; Pi's baseUrl is hs.URL + "/v1"
//	defer hs.Close()
//
// pitest.New does this and writes Pi's models.json for it.
package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// MaxBodySize caps a request body in bytes.
const MaxBodySize = 16 << 20

// ToolCall is one scripted tool call. Arguments are the JSON fragments sent as
// consecutive argument deltas; joined they must form the arguments object.
type ToolCall struct {
	ID        string // e.g. "call_1"; empty means "call_<n>"
	Name      string // tool name, e.g. "bash"
	Arguments []string
}

// Script is one scripted answer.
type Script struct {
	// Status is the HTTP status; zero means 200 and a stream. A status >= 400
	// sends Body as application/json and no stream.
	Status int
	// Body is the error body for Status >= 400; empty means
	// {"message":"scripted error","type":"server_error"}.
	Body string
	// Text is sent as content deltas, one chunk each.
	Text []string
	// ToolCalls are streamed after the text; then finish_reason is
	// "tool_calls".
	ToolCalls []ToolCall
	// Delay is waited before each chunk (role, deltas, finish).
	Delay time.Duration
	// Hang keeps the stream open after the deltas, without finishing, until
	// the client goes away or [Server.Close] is called (to test abort).
	Hang bool
	// FinishReason overrides the final finish_reason ("stop"/"tool_calls").
	FinishReason string
	// PromptTokens and CompletionTokens go into the usage chunk; zero means
	// 10 and the number of deltas.
	PromptTokens, CompletionTokens int
}

// Message is one message of a request, as Pi sends it to an
// openai-completions provider: Role is the chat API's ("system", "user",
// "assistant", "tool"), not Pi's own message roles (a Pi toolResult is
// "tool" here).
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"` // string, array of parts or null
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
}

// Text returns the content when it is a string, or its joined text parts
// (see [pimessage.Text]).
func (m Message) Text() string { return pimessage.Text(m.Content) }

// Request is one recorded request.
type Request struct {
	Model    string
	Stream   bool
	Messages []Message
	Tools    []string // function names offered to the model
	Header   http.Header
	Body     []byte    // the raw JSON body
	Arrived  time.Time // when the whole body had been read
}

// LastUserText returns the text of the last message with role "user".
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// Last returns the last message (zero Message when there is none).
func (r *Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ScriptFunc chooses the script for a request. It is called from the
// request's goroutine and must be safe for concurrent use.
type ScriptFunc func(*Request) Script

// Server is an http.Handler serving scripted completions. Create it with
// [New]. It is safe for concurrent use; [Server.Close] releases hanging
// streams, after which it answers 503.
type Server struct {
	script ScriptFunc
	mux    *http.ServeMux

	mu       sync.Mutex
	requests []Request
	closed   chan struct{}
	once     sync.Once
}

// New returns a server answering with script; nil answers "ok".
func New(script ScriptFunc) *Server {
	if script == nil {
		script = Reply("ok")
	}
	s := &Server{script: script, mux: http.NewServeMux(), closed: make(chan struct{})}
	s.mux.HandleFunc("POST /v1/chat/completions", s.completions)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close ends hanging streams and makes later requests fail with 503.
// It is idempotent.
func (s *Server) Close() { s.once.Do(func() { close(s.closed) }) }

// Requests returns a copy of the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

type wireRequest struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []Message `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.closed:
		http.Error(w, `{"message":"server closed","type":"server_error"}`, http.StatusServiceUnavailable)
		return
	default:
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
	arrived := time.Now()
	if err != nil {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "request body too large")
		return
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		writeJSONError(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	req := Request{Model: wr.Model, Stream: wr.Stream, Messages: wr.Messages, Header: r.Header.Clone(), Body: body, Arrived: arrived}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.mu.Unlock()

	sc := s.script(&req)
	if sc.Status >= 400 {
		b := sc.Body
		if b == "" {
			b = `{"message":"scripted error","type":"server_error"}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(sc.Status)
		io.WriteString(w, b)
		return
	}
	s.stream(w, r, &req, sc, n)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg, "type": "invalid_request_error"})
}

// Wire chunk shapes (reference §5.3).
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chunkUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, sc Script, n int) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	id := fmt.Sprintf("chatcmpl-%d", n)
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	// wait returns false when the client went away or the server closed.
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return r.Context().Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		case <-s.closed:
			return false
		}
	}
	send := func(c chunk) bool {
		c.ID, c.Object, c.Created, c.Model = id, "chat.completion.chunk", 1, model
		if c.Choices == nil {
			c.Choices = []chunkChoice{}
		}
		b, err := json.Marshal(c)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	empty := ""
	one := func(d delta, finish *string) chunk {
		return chunk{Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
	}
	if !wait(sc.Delay) || !send(one(delta{Role: "assistant", Content: &empty}, nil)) {
		return
	}
	deltas := 0
	for _, t := range sc.Text {
		t := t
		if !wait(sc.Delay) || !send(one(delta{Content: &t}, nil)) {
			return
		}
		deltas++
	}
	for i, tc := range sc.ToolCalls {
		callID := tc.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%d", i+1)
		}
		head := toolCallDelta{Index: i, ID: callID, Type: "function", Function: functionDelta{Name: tc.Name}}
		if !wait(sc.Delay) || !send(one(delta{ToolCalls: []toolCallDelta{head}}, nil)) {
			return
		}
		for _, frag := range tc.Arguments {
			if !wait(sc.Delay) || !send(one(delta{ToolCalls: []toolCallDelta{{Index: i, Function: functionDelta{Arguments: frag}}}}, nil)) {
				return
			}
			deltas++
		}
	}
	if sc.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	finish := sc.FinishReason
	if finish == "" {
		finish = "stop"
		if len(sc.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	if !wait(sc.Delay) || !send(one(delta{}, &finish)) {
		return
	}
	pt, ct := sc.PromptTokens, sc.CompletionTokens
	if pt == 0 {
		pt = 10
	}
	if ct == 0 {
		ct = deltas
	}
	if !send(chunk{Usage: &chunkUsage{PromptTokens: pt, CompletionTokens: ct, TotalTokens: pt + ct}}) {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// Words splits text into deltas of one word each (spaces kept).
func Words(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// Reply answers every request with text, one word per delta.
func Reply(text string) ScriptFunc {
	return func(*Request) Script { return Script{Text: Words(text)} }
}

// Case is one branch of [Switch].
type Case struct {
	// Contains must occur in the last user message text.
	Contains string
	Script   Script
}

// Switch picks the first case whose Contains occurs in the last user message,
// else fallback. A request whose last message is a tool result is answered
// with fallback too, so a tool-call script is followed by a normal reply.
func Switch(fallback Script, cases ...Case) ScriptFunc {
	return func(r *Request) Script {
		if r.Last().Role == "tool" {
			return fallback
		}
		text := r.LastUserText()
		for _, c := range cases {
			if strings.Contains(text, c.Contains) {
				return c.Script
			}
		}
		return fallback
	}
}
