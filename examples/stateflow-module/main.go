// Command stateflow-module is a third party's State Flow with a Go-native
// semantic module (seed 003; `extension.NewWithOptions`): the module
// x_go_notes keeps {"entries": [string...]} durable memory, contributes it
// to context as user-level data and, when PIKIT_EXAMPLE_PRODUCE is set,
// proposes {"entries": [..., "produced"]} in each Active preparation.
//
//	go build -o stateflow-module ./examples/stateflow-module
//	pikit ext install stateflow --exec ./stateflow-module
//
// PIKIT_EXAMPLE_PRODUCE=<path> makes the producer wait until the file
// <path> exists before answering, after creating <path>.waiting (a test
// uses it to change the model while a proposal is being computed), and
// <path>.cancelled when its context is cancelled while waiting.
// Test controls: PIKIT_EXAMPLE_SOURCE=<path> gives the module an input,
// the file's bytes, whose receipt turns obsolete once they change, and
// contributes {"source": <input>} as data; PIKIT_EXAMPLE_SCHEMA=<n>
// declares schemaVersion n (default 1); PIKIT_EXAMPLE_LOG=<path> appends
// one line per Validate call ("validate").
package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/extension"
)

// notes is the Go-native module.
type notes struct {
	gate, source, log string
	schema            int64
}

func (n *notes) Policy() sf.ModulePolicy {
	return sf.ModulePolicy{ID: "x_go_notes", APIVersion: sf.ModuleAPIVersion, SchemaVersion: n.schema, Produce: n.gate != "", CaptureInput: n.source != ""}
}

// Validate admits {"entries": [string...]} and nothing else.
func (n *notes) Validate(_ context.Context, v map[string]any) (bool, error) {
	if n.log != "" {
		if f, err := os.OpenFile(n.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = f.WriteString("validate\n")
			_ = f.Close()
		}
	}
	es, ok := v["entries"].([]any)
	if !ok || len(v) != 1 {
		return false, nil
	}
	for _, e := range es {
		if _, ok := e.(string); !ok {
			return false, nil
		}
	}
	return true, nil
}

// CaptureInput reads the source file; its receipt fails once the file's
// bytes differ.
func (n *notes) CaptureInput(context.Context, sf.ModuleSource) (*sf.ModuleInput, error) {
	if n.source == "" {
		return nil, errors.New("x_go_notes captures no input")
	}
	b, err := os.ReadFile(n.source)
	if err != nil {
		return nil, err
	}
	return &sf.ModuleInput{Value: string(b), AssertCurrent: func() error {
		if now, err := os.ReadFile(n.source); err != nil || !bytes.Equal(now, b) {
			return errors.New("x_go_notes: the source changed")
		}
		return nil
	}}, nil
}

// Context contributes the content as data when present, and the captured
// input.
func (n *notes) Context(_ context.Context, content map[string]any, f sf.ModuleFrame) ([]sf.ModuleContribution, error) {
	var out []sf.ModuleContribution
	if content != nil {
		out = append(out, sf.ModuleContribution{Kind: sf.ContributionData, Value: content})
	}
	if f.Input != nil {
		out = append(out, sf.ModuleContribution{Kind: sf.ContributionData, Value: map[string]any{"source": f.Input}})
	}
	return out, nil
}

// Produce marks that it is waiting (<gate>.waiting), waits for the gate
// file, then appends "produced".
func (n *notes) Produce(ctx context.Context, content map[string]any, _ sf.ModuleFrame) (map[string]any, bool, error) {
	_ = os.WriteFile(n.gate+".waiting", nil, 0o600)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if _, err := os.Stat(n.gate); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			_ = os.WriteFile(n.gate+".cancelled", nil, 0o600)
			return nil, false, ctx.Err()
		case <-t.C:
		}
	}
	entries := []any{}
	if es, ok := content["entries"].([]any); ok {
		entries = append(entries, es...)
	}
	return map[string]any{"entries": append(entries, "produced")}, true, nil
}

func main() {
	mod := &notes{gate: os.Getenv("PIKIT_EXAMPLE_PRODUCE"), source: os.Getenv("PIKIT_EXAMPLE_SOURCE"), log: os.Getenv("PIKIT_EXAMPLE_LOG"), schema: 1}
	if v, err := strconv.ParseInt(os.Getenv("PIKIT_EXAMPLE_SCHEMA"), 10, 64); err == nil && v > 0 {
		mod.schema = v
	}
	piext.Main(extension.NewWithOptions(os.Getenv("PI_CODING_AGENT_DIR"), os.Getenv("HOME"), extension.Options{Modules: []sf.Module{mod}}))
}
