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
// uses it to change the model while a proposal is being computed).
package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/extension"
)

// notes is the Go-native module.
type notes struct{ gate string }

func (n *notes) Policy() sf.ModulePolicy {
	return sf.ModulePolicy{ID: "x_go_notes", APIVersion: sf.ModuleAPIVersion, SchemaVersion: 1, Produce: n.gate != ""}
}

// Validate admits {"entries": [string...]} and nothing else.
func (n *notes) Validate(_ context.Context, v map[string]any) (bool, error) {
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

func (n *notes) CaptureInput(context.Context, sf.ModuleSource) (*sf.ModuleInput, error) {
	return nil, errors.New("x_go_notes captures no input")
}

// Context contributes the content as data when present.
func (n *notes) Context(_ context.Context, content map[string]any, _ sf.ModuleFrame) ([]sf.ModuleContribution, error) {
	if content == nil {
		return nil, nil
	}
	return []sf.ModuleContribution{{Kind: sf.ContributionData, Value: content}}, nil
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
	mod := &notes{gate: os.Getenv("PIKIT_EXAMPLE_PRODUCE")}
	piext.Main(extension.NewWithOptions(os.Getenv("PI_CODING_AGENT_DIR"), os.Getenv("HOME"), extension.Options{Modules: []sf.Module{mod}}))
}
