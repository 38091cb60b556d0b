package piext_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/piext"
)

type benchArgs struct {
	Path    string   `json:"path" jsonschema:"the file"`
	Offset  int      `json:"offset,omitempty"`
	Limit   int      `json:"limit,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Body    string   `json:"body,omitempty"`
}

// BenchmarkToolArguments is a typed tool's argument handling (ToolFor:
// validation against the derived schema, then the strict decode) against
// today's hand decode in a raw tool (encoding/json into the same struct),
// both through the tool's Execute with a no-op handler, in the same run:
// "small" is four members, "large" a 16 KiB body and 64 tags. The ratio is
// typed ns/op over hand ns/op of the same size.
//
//	go test -run XX -bench ToolArguments -benchmem ./piext/
func BenchmarkToolArguments(b *testing.B) {
	tags := make([]string, 64)
	for i := range tags {
		tags[i] = "tag-" + strings.Repeat("x", i%8)
	}
	large, _ := json.Marshal(benchArgs{Path: "/src/main.go", Offset: 10, Limit: 200, Pattern: "func ", Tags: tags, Body: strings.Repeat("lorem ipsum ", 16<<10/12)})
	sizes := []struct {
		name string
		args json.RawMessage
	}{
		{"small", json.RawMessage(`{"path":"/src/main.go","offset":10,"limit":200,"pattern":"func "}`)},
		{"large", large},
	}
	var sink benchArgs
	hand := piext.Tool{Name: "read_hand", Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
		var in benchArgs
		if err := json.Unmarshal(c.Params, &in); err != nil {
			return nil, err
		}
		sink = in
		return &piext.ToolResult{}, nil
	}}
	typed := piext.ToolFor(piext.Tool{Name: "read_typed"}, func(ctx context.Context, c *piext.ToolCall, in benchArgs) (*piext.ToolResult, any, error) {
		sink = in
		return &piext.ToolResult{}, nil, nil
	})
	for _, s := range sizes {
		for _, t := range []struct {
			name string
			tool piext.Tool
		}{{"hand", hand}, {"typed", typed}} {
			b.Run(s.name+"/"+t.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(s.args)))
				call := &piext.ToolCall{ID: "c1", Params: s.args}
				for b.Loop() {
					res, err := t.tool.Execute(context.Background(), call)
					if err != nil || res.IsError {
						b.Fatalf("%+v %v", res, err)
					}
				}
			})
		}
	}
	_ = sink
}
