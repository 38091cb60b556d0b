package demo

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
)

// Label starts every reply of the offline demo model, so nobody mistakes it
// for a real model's answer.
const Label = "[pikit demo: scripted output, not a real model]"

// Provider and model ids of the offline demo model in its models.json.
const (
	DemoProvider = "pikit-demo"
	DemoModel    = "scripted-demo"
)

// Envelope delimiters.
const (
	envelopeBegin = "\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n"
	envelopeEnd   = "\n--- END UNTRUSTED BROWSER CONTEXT ---"
)

// wordDelay paces the streamed words so progress is visible in the taskbar.
const wordDelay = 30 * time.Millisecond

// Envelope is the part of a prompt envelope the demo model reads.
type Envelope struct {
	Prompt  string
	Context BrowserContext
}

// BrowserContext is the part of a browser-context.v1 document the demo model
// quotes.
type BrowserContext struct {
	Location struct {
		Path string `json:"path"`
	} `json:"location"`
	FocusPoints []FocusPoint `json:"focus_points"`
}

// FocusPoint is one marked element: its selector and source hint.
type FocusPoint struct {
	Selector string `json:"selector"`
	Source   struct {
		Status     string `json:"status"`
		References []struct {
			Role      string `json:"role"`
			Path      string `json:"path"`
			Line      int    `json:"line,omitempty"`
			Precision string `json:"precision"`
		} `json:"references"`
	} `json:"source"`
}

// ParseEnvelope splits a prompt message into the instruction and its
// browser context. ok is false when msg has no well-formed envelope.
func ParseEnvelope(msg string) (env Envelope, ok bool) {
	i := strings.LastIndex(msg, envelopeBegin)
	if i < 0 || !strings.HasSuffix(msg, envelopeEnd) || i+len(envelopeBegin) > len(msg)-len(envelopeEnd) {
		return Envelope{}, false
	}
	raw := msg[i+len(envelopeBegin) : len(msg)-len(envelopeEnd)]
	if err := json.Unmarshal([]byte(raw), &env.Context); err != nil {
		return Envelope{}, false
	}
	env.Prompt = msg[:i]
	return env, true
}

// hint renders a focus point's source hint for the reply.
func (f FocusPoint) hint() string {
	if f.Source.Status != "available" || len(f.Source.References) == 0 {
		st := f.Source.Status
		if st == "" {
			st = "unavailable"
		}
		return "source hint " + st
	}
	var parts []string
	for _, r := range f.Source.References {
		s := r.Path
		if r.Line > 0 {
			s += fmt.Sprintf(":%d", r.Line)
		}
		parts = append(parts, fmt.Sprintf("%s %s", r.Role, s))
	}
	return "source " + strings.Join(parts, ", ")
}

// pageTemplates maps the example app's routes to their templates, for a
// whole-page task.
var pageTemplates = map[string]string{
	"/":          "templates/home.html",
	"/tasks":     "templates/tasks.html",
	"/tasks/new": "templates/new.html",
	"/about":     "templates/about.html",
}

// readTarget picks the file the demo reads: the first marked element's
// template, else the page's template, else the layout. Only project-relative
// paths of existing files in root are used.
func readTarget(root string, c BrowserContext) string {
	var cands []string
	for _, f := range c.FocusPoints {
		for _, r := range f.Source.References {
			cands = append(cands, r.Path)
		}
	}
	if p, ok := pageTemplates[c.Location.Path]; ok {
		cands = append(cands, p)
	}
	cands = append(cands, "templates/layout.html")
	for _, p := range cands {
		if !fs.ValidPath(p) || strings.Contains(p, "\\") {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return "templates/layout.html"
}

// Script returns the offline demo model for a project rooted at root. For a
// taskbar prompt it answers in two turns: a short note and one `read` tool
// call of the marked element's template (so the taskbar shows "Running
// read"), then, after the tool result, an answer that quotes every marked
// element's selector and source hint. Every reply starts with [Label].
func Script(root string) modelserver.ScriptFunc {
	return func(r *modelserver.Request) modelserver.Script {
		env, ok := ParseEnvelope(r.LastUserText())
		if !ok {
			return modelserver.Script{Delay: wordDelay, Text: modelserver.Words(Label +
				" The offline demo model only answers tasks sent from the pikit taskbar.")}
		}
		target := readTarget(root, env.Context)
		if r.Last().Role == "tool" {
			return modelserver.Script{Delay: wordDelay, Text: modelserver.Words(answer(env, target, r.Last().Text()))}
		}
		args, _ := json.Marshal(map[string]string{"path": target})
		return modelserver.Script{
			Delay: wordDelay,
			Text:  modelserver.Words(Label + " Let me look at " + target + " first.\n"),
			ToolCalls: []modelserver.ToolCall{{
				Name:      "read",
				Arguments: []string{string(args[:len(args)/2]), string(args[len(args)/2:])},
			}},
		}
	}
}

func answer(env Envelope, target, toolResult string) string {
	var b strings.Builder
	b.WriteString(Label + "\n")
	prompt := strings.TrimSpace(env.Prompt)
	if len(prompt) > 200 {
		prompt = prompt[:200] + "…"
	}
	fmt.Fprintf(&b, "Your task: %q\n", prompt)
	switch n := len(env.Context.FocusPoints); n {
	case 0:
		fmt.Fprintf(&b, "You sent the whole page %s with no marked element.\n", env.Context.Location.Path)
	default:
		fmt.Fprintf(&b, "You marked %d element(s) on %s:\n", n, env.Context.Location.Path)
		for i, f := range env.Context.FocusPoints {
			fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, f.Selector, f.hint())
		}
	}
	lines := strings.Count(strings.TrimRight(toolResult, "\n"), "\n") + 1
	if strings.TrimSpace(toolResult) == "" {
		lines = 0
	}
	fmt.Fprintf(&b, "I read %s (%d lines). A real model would now edit it to do the task; this demo changes nothing.\n",
		path.Clean(target), lines)
	b.WriteString("To use a real model, configure a provider in Pi, or run: pikit demo --model-provider <provider> --model <id>\n")
	return b.String()
}
