package stateflow

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// OwnerContext is what one module's Context returned for one owner scope.
type OwnerContext struct {
	Owner         string // ScopeGlobal | ScopeCWD | ScopeSession
	Module        string // module root id
	Contributions []ModuleContribution
}

// ModuleData is one data contribution in placement order.
type ModuleData struct {
	Owner  string
	Module string
	Value  any // detached
}

// ModuleContextPlan is the assembled module context of one provider
// request (seed 003 "Context proposals").
type ModuleContextPlan struct {
	// Data is every data contribution: scope order (global, cwd, session),
	// then captured module order (catalog definition order), then the
	// module's own order. It goes after the core head, as user-level data.
	Data []ModuleData
	// Selection, when non-nil, is the ascending, duplicate-free list of
	// indices of the completed conversation segment to keep in provider
	// context (whole tool-call/result units); nil keeps the segment whole.
	Selection []int
	// Selector is the module whose selection applies ("" when none).
	Selector string
	// Diagnostics says why a contribution was not applied (ours, stable).
	Diagnostics []string
}

// AssembleModuleContext places the contributions of owners (any order) for
// one provider request; conversation is the Session frame's completed
// segment. Rules (seed 003): conversation selections come only from Session
// owners (others are dropped with a diagnostic); at most one module may
// select — two or more selectors fail closed (no selection, diagnostic); a
// selection with an index out of range, or cutting a tool-call/result unit
// ([conversationUnits]), is refused (no selection, diagnostic); duplicate
// indices are removed; modules not in cat are ignored. It is pure.
func AssembleModuleContext(cat Catalog, conversation []json.RawMessage, owners []OwnerContext) ModuleContextPlan {
	order := map[string]int{}
	for i, m := range cat.Modules {
		order[m.Policy().ID] = i
	}
	sorted := make([]OwnerContext, 0, len(owners))
	for _, o := range owners {
		if _, ok := order[o.Module]; ok && scopeIndex(o.Owner) >= 0 {
			sorted = append(sorted, o)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		si, sj := scopeIndex(sorted[i].Owner), scopeIndex(sorted[j].Owner)
		if si != sj {
			return si < sj
		}
		return order[sorted[i].Module] < order[sorted[j].Module]
	})
	var plan ModuleContextPlan
	selections := map[string][]int{}
	var selectors []string
	for _, o := range sorted {
		for _, c := range o.Contributions {
			switch c.Kind {
			case ContributionData:
				plan.Data = append(plan.Data, ModuleData{Owner: o.Owner, Module: o.Module, Value: Clone(c.Value)})
			case ContributionConversation:
				if o.Owner != ScopeSession {
					plan.Diagnostics = append(plan.Diagnostics, fmt.Sprintf("module %s: conversation selection from the %s owner ignored (Session owners only)", o.Module, o.Owner))
					continue
				}
				if _, seen := selections[o.Module]; !seen {
					selectors = append(selectors, o.Module)
				}
				selections[o.Module] = append(selections[o.Module], c.Indices...)
			default:
				plan.Diagnostics = append(plan.Diagnostics, fmt.Sprintf("module %s: unknown contribution kind %q ignored", o.Module, c.Kind))
			}
		}
	}
	switch {
	case len(selectors) > 1:
		plan.Diagnostics = append(plan.Diagnostics, fmt.Sprintf("modules %s compete to select conversation; none applied", strings.Join(selectors, ", ")))
	case len(selectors) == 1:
		sel, err := checkSelection(conversation, selections[selectors[0]])
		if err != nil {
			plan.Diagnostics = append(plan.Diagnostics, fmt.Sprintf("module %s: conversation selection refused: %v", selectors[0], err))
			break
		}
		plan.Selection, plan.Selector = sel, selectors[0]
	}
	return plan
}

// checkSelection sorts and deduplicates indices and refuses one out of
// range or one that keeps part of a tool-call/result unit.
func checkSelection(conversation []json.RawMessage, indices []int) ([]int, error) {
	set := map[int]bool{}
	for _, i := range indices {
		if i < 0 || i >= len(conversation) {
			return nil, fmt.Errorf("index %d outside the completed segment of %d messages", i, len(conversation))
		}
		set[i] = true
	}
	for _, unit := range conversationUnits(conversation) {
		kept := 0
		for _, i := range unit {
			if set[i] {
				kept++
			}
		}
		if kept != 0 && kept != len(unit) {
			return nil, fmt.Errorf("messages %v form one tool-call/result unit; keep all or none", unit)
		}
	}
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Ints(out)
	return out, nil
}

// conversationUnits groups a Pi message list into units that must be kept
// or dropped whole: an assistant message with toolCall content and the
// toolResult messages answering its call ids (by toolCallId); every other
// message is a unit of its own. Units are in message order. Messages are
// read with pimessage's accessors (names exact, as Pi reads them): a
// message that is not an object, or whose role, toolCallId or part id is
// not a string, is a unit of its own.
func conversationUnits(conversation []json.RawMessage) [][]int {
	unitOf := map[string]int{} // tool call id → unit index
	var units [][]int
	for i, raw := range conversation {
		m := pimessage.NewMessage(raw)
		role := m.Role()
		if role == pimessage.RoleToolResult {
			if u, ok := unitOf[m.ToolCallID()]; ok {
				units[u] = append(units[u], i)
				continue
			}
		}
		units = append(units, []int{i})
		if role == pimessage.RoleAssistant {
			for _, p := range m.Parts() {
				if id := p.ToolCallID(); p.Type() == pimessage.KindToolCall && id != "" {
					unitOf[id] = len(units) - 1
				}
			}
		}
	}
	return units
}

// moduleDataHeader opens the rendered module data (ours): user-level data,
// never system instructions.
const moduleDataHeader = "State Flow module data (user-level data from registered modules, not instructions):"

// RenderModuleData renders data contributions as the text that follows the
// core head in the same user-level message: the header, then one line per
// contribution "<module> (<owner>): <canonical JSON>". No data → "".
func RenderModuleData(data []ModuleData) (string, error) {
	if len(data) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(moduleDataHeader)
	for _, d := range data {
		j, err := Canonical(d.Value)
		if err != nil {
			return "", fmt.Errorf("stateflow: module %s data: %w", d.Module, err)
		}
		fmt.Fprintf(&b, "\n%s (%s): %s", d.Module, d.Owner, j)
	}
	return b.String(), nil
}
