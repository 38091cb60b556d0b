package piext

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// ToolHandlerFor runs a typed tool ([ToolFor]): in holds the arguments,
// already validated against the tool's schema and decoded strictly. It
// returns what Pi shows and the model reads:
//   - an error becomes an error result (isError) with the error's text, the
//     way Pi reports a thrown tool error, never a protocol failure;
//   - out, unless it is the zero value of a pointer or interface type,
//     becomes the result's details (marshalled as JSON) and, when the
//     result has no content, its content: one text part holding out as
//     JSON;
//   - res may be nil when out says everything; its Details win over out.
type ToolHandlerFor[In, Out any] func(ctx context.Context, call *ToolCall, in In) (res *ToolResult, out Out, err error)

// ToolFor returns t with Parameters and Execute set for a typed handler,
// the way the MCP Go SDK's AddTool does:
//
//   - Parameters, when t leaves it nil, is the JSON Schema inferred from In
//     (github.com/google/jsonschema-go: exported fields by their json
//     names, required unless omitempty/omitzero, a `jsonschema:"..."` tag
//     is the description, no other members allowed). In must be a struct
//     (or a map with string keys). A Parameters t sets is kept and used
//     instead (draft 2020-12 or draft-07; its root must be an object).
//   - Each call's arguments are validated against that schema, then decoded
//     into In strictly: member names match exactly (no case folding, so
//     {"name":…,"NAME":…} cannot smuggle a second value past the schema)
//     and a duplicate member is refused. Arguments that fail either become
//     an error result naming the problem; the handler does not run.
//     Schema defaults are not applied.
//
// ToolFor panics when it cannot make a schema from In, when the schema
// does not resolve or its root is not an object, and when t already has an
// Execute: programming errors, like [Extension.Manifest]'s.
func ToolFor[In, Out any](t Tool, h ToolHandlerFor[In, Out]) Tool {
	if t.Execute != nil {
		panic(fmt.Sprintf("piext: ToolFor %q: the tool already has an Execute", t.Name))
	}
	if h == nil {
		panic(fmt.Sprintf("piext: ToolFor %q: nil handler", t.Name))
	}
	var schema *jsonschema.Schema
	if t.Parameters == nil {
		s, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("piext: ToolFor %q: %v", t.Name, err))
		}
		raw, err := json.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("piext: ToolFor %q: %v", t.Name, err))
		}
		schema, t.Parameters = s, raw
	} else {
		schema = new(jsonschema.Schema)
		if err := json.Unmarshal(t.Parameters, schema); err != nil {
			panic(fmt.Sprintf("piext: ToolFor %q: parameters: %v", t.Name, err))
		}
	}
	if err := checkObjectRoot(t.Parameters); err != nil {
		panic(fmt.Sprintf("piext: ToolFor %q: %v", t.Name, err))
	}
	switch schema.Schema {
	case "", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2020-12/schema":
	default:
		panic(fmt.Sprintf("piext: ToolFor %q: $schema %q: only draft 2020-12 and draft-07 validate", t.Name, schema.Schema))
	}
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("piext: ToolFor %q: %v", t.Name, err))
	}
	name := t.Name
	t.Execute = func(ctx context.Context, call *ToolCall) (*ToolResult, error) {
		in, err := decodeArguments[In](resolved, call.Params)
		if err != nil {
			return nil, fmt.Errorf("piext: tool %s: invalid arguments: %w", name, err)
		}
		res, out, err := h(ctx, call, in)
		if err != nil {
			return nil, err
		}
		return withOutput(res, out)
	}
	return t
}

// decodeArguments validates params against the schema and decodes them
// into In, both strictly (see [ToolFor]). Absent or null arguments are
// the empty object.
func decodeArguments[In any](schema *jsonschema.Resolved, params json.RawMessage) (In, error) {
	var in In
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	var v any
	if err := wire.Decode(params, &v); err != nil {
		return in, err
	}
	if err := schema.Validate(v); err != nil {
		return in, err
	}
	if err := wire.Decode(params, &in); err != nil {
		return in, err
	}
	return in, nil
}

// withOutput fills res from a typed handler's out (see [ToolHandlerFor]).
func withOutput[Out any](res *ToolResult, out Out) (*ToolResult, error) {
	if res == nil {
		res = &ToolResult{}
	}
	if v := reflect.ValueOf(out); !v.IsValid() || (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return res, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("piext: tool output: %w", err)
	}
	if res.Details == nil {
		res.Details = json.RawMessage(raw)
	}
	if res.Content == nil {
		res.Content = []Content{Text(string(raw))}
	}
	return res, nil
}

// checkObjectRoot refuses a parameters schema whose root is not an object
// schema: Pi and the model providers take a tool's parameters as the
// properties of one JSON object.
func checkObjectRoot(params json.RawMessage) error {
	var root struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(params, &root); err != nil {
		return fmt.Errorf("parameters are not a JSON Schema object: %w", err)
	}
	if root.Type != "object" {
		return fmt.Errorf("parameters: the schema's root must have \"type\": \"object\", not %v", typeText(root.Type))
	}
	return nil
}

func typeText(t any) string {
	if t == nil {
		return "none"
	}
	b, _ := json.Marshal(t)
	return string(b)
}
