package browsertest

import (
	"context"
	"math"
)

// Input for the engines driven through W3C WebDriver (classic and BiDi):
// both take the same action sources ("Perform Actions"), built here.

// inputSource is one input source of a Perform Actions command.
type inputSource struct {
	Type       string         `json:"type"` // "key" or "pointer"
	ID         string         `json:"id"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Actions    []inputAction  `json:"actions"`
}

// inputAction is one tick of a source. Value is a key's code point (or a
// WebDriver key such as "\uE004" for Tab); X and Y are viewport CSS pixels.
type inputAction struct {
	Type   string `json:"type"`
	Value  string `json:"value,omitempty"`
	Button *int   `json:"button,omitempty"`
	X      *int   `json:"x,omitempty"`
	Y      *int   `json:"y,omitempty"`
	Origin string `json:"origin,omitempty"`
}

// actor performs W3C input actions in one tab.
type actor interface {
	performActions(ctx context.Context, sources []inputSource) error
}

// w3cInput gives a driver that performs W3C actions the pointer and keys
// of [driver].
type w3cInput struct{ a actor }

func (w w3cInput) pointer(ctx context.Context, x, y float64, press, release bool) error {
	return w.a.performActions(ctx, pointerActions(x, y, press, release))
}

func (w w3cInput) keys(ctx context.Context, keys string, mods Modifier) error {
	return w.a.performActions(ctx, keyActions(keys, mods))
}

// webdriverKeys are the WebDriver key values ("Keyboard actions") of the
// control characters [Key] accepts.
var webdriverKeys = map[rune]string{
	'\t': "\uE004", '\r': "\uE007", '\n': "\uE007", '\u001b': "\uE00C", '\b': "\uE003",
}

const webdriverShift = "\uE008"

// keyActions types keys (see [Key]) with mods held.
func keyActions(keys string, mods Modifier) []inputSource {
	var acts []inputAction
	if mods&ModifierShift != 0 {
		acts = append(acts, inputAction{Type: "keyDown", Value: webdriverShift})
	}
	for _, r := range keys {
		v, ok := webdriverKeys[r]
		if !ok {
			v = string(r)
		}
		acts = append(acts, inputAction{Type: "keyDown", Value: v}, inputAction{Type: "keyUp", Value: v})
	}
	if mods&ModifierShift != 0 {
		acts = append(acts, inputAction{Type: "keyUp", Value: webdriverShift})
	}
	return []inputSource{{Type: "key", ID: "keyboard", Actions: acts}}
}

// pointerActions moves the mouse to (x, y) and then presses and releases
// the left button as press and release say.
func pointerActions(x, y float64, press, release bool) []inputSource {
	left := 0
	// WebDriver classic takes whole pixels; the centre of a control rounds
	// inside it.
	ix, iy := int(math.Round(x)), int(math.Round(y))
	acts := []inputAction{{Type: "pointerMove", X: &ix, Y: &iy, Origin: "viewport"}}
	if press {
		acts = append(acts, inputAction{Type: "pointerDown", Button: &left})
	}
	if release {
		acts = append(acts, inputAction{Type: "pointerUp", Button: &left})
	}
	return []inputSource{{Type: "pointer", ID: "mouse", Parameters: map[string]any{"pointerType": "mouse"}, Actions: acts}}
}
