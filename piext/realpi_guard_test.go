package piext_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// TestRealPi_ThirdPartyGuard is a new user's extension written from the
// package doc alone (examples/piext-guard: a typed tool and a tool_call
// guard), built with go build and installed with `pikit ext install guard
// --exec`, in the real Pi: Pi offers the model the schema ToolFor derived
// (closed: no other members), the tool answers, a case-folded twin of its
// argument is refused before it runs, and the guard blocks bash on rm -rf
// with its reason while another bash command runs.
func TestRealPi_ThirdPartyGuard(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Script: script(map[string][]modelserver.ToolCall{
		"COUNT":  {toolCall("call_count", "word_count", `{"text":"one two three"}`)},
		"FOLDED": {toolCall("call_folded", "word_count", `{"Text":"one two"}`)},
		"DELETE": {toolCall("call_rm", "bash", `{"command":"rm -rf ./nothing-here"}`)},
		"LIST":   {toolCall("call_ls", "bash", `{"command":"echo listed"}`)},
	})})
	env.InstallExtension(t, "guard", pitest.BuildCommand(t, "./examples/piext-guard"))
	c, err := pirpc.Start(testCtx(t), env.Options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(t.Context()) })
	ctx := testCtx(t)
	ends := map[string]*pirpc.ToolExecutionEnd{}
	for _, prompt := range []string{"COUNT words", "FOLDED words", "DELETE files", "LIST files"} {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: prompt}); err != nil {
			t.Fatal(err)
		}
		for _, e := range find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled)) {
			ends[e.ToolCallID] = e
		}
	}
	reqs := env.Server.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `"word_count"`) ||
		!strings.Contains(string(reqs[0].Body), `"additionalProperties":false`) ||
		!strings.Contains(string(reqs[0].Body), "the text to count the words of") {
		t.Errorf("the first model request lacks word_count's derived schema")
	}
	for id, want := range map[string]struct {
		isError bool
		text    string
	}{
		"call_count":  {false, "3 words"},
		"call_folded": {true, "Text"},
		"call_rm":     {true, "guard: rm -rf is not allowed"},
		"call_ls":     {false, "listed"},
	} {
		e := ends[id]
		if e == nil {
			t.Errorf("%s: no tool_execution_end", id)
			continue
		}
		if e.IsError != want.isError || !strings.Contains(string(e.Result), want.text) {
			t.Errorf("%s: isError=%v result %s; want isError=%v with %q", id, e.IsError, e.Result, want.isError, want.text)
		}
	}
}
