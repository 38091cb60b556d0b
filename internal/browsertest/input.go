package browsertest

import "testing"

// Real pointer and key input, and network emulation.

// ClickAt scrolls the element elementExpr evaluates to into view and clicks
// its centre with a real pointer event, once its box has stayed put for two
// animation frames and the element (or a descendant) is what a hit test at
// that point finds (a render or a late network answer in flight would move
// it, or put another control, under the pointer). It fails the test, naming
// what is there instead, when that has not happened within about 2 s.
func ClickAt(t testing.TB, tab *Tab, elementExpr string) {
	t.Helper()
	res := Eval[[]any](t, tab, `(async () => {
		const e = `+elementExpr+`;
		e.scrollIntoView({block: "start"});
		const box = () => { const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height]; };
		const frame = () => new Promise((resolve) => { requestAnimationFrame(resolve); setTimeout(resolve, 100); });
		const at = (b) => { const root = e.getRootNode(); const h = (root.elementFromPoint ? root : document).elementFromPoint(b[0], b[1]); return h; };
		const name = (h) => h ? h.localName + [...h.attributes].map((a) => "[" + a.name + "]").join("") : "nothing";
		let b = box(), still = 0, hit = null;
		for (let i = 0; i < 20 && still < 2; i++) {
			await frame();
			const n = box();
			hit = at(n);
			still = n.every((v, j) => v === b[j]) && hit && (hit === e || e.contains(hit)) ? still + 1 : 0;
			b = n;
		}
		return [b[0], b[1], still >= 2 ? "" : name(hit)];
	})()`)
	if other, _ := res[2].(string); other != "" {
		t.Fatalf("%s: click on %s: the element did not settle under the pointer (%s is there)", tab.Engine, elementExpr, other)
	}
	ClickXY(t, tab, res[0].(float64), res[1].(float64))
}

// ClickXY clicks the left mouse button at the viewport point (x, y).
func ClickXY(t testing.TB, tab *Tab, x, y float64) {
	t.Helper()
	if err := tab.d.pointer(tab.ctx, x, y, true, true); err != nil {
		t.Fatalf("%s: click at %v,%v: %v", tab.Engine, x, y, err)
	}
}

// MouseDown moves the mouse to (x, y) and presses the left button; MouseUp
// releases it there.
func MouseDown(t testing.TB, tab *Tab, x, y float64) {
	t.Helper()
	if err := tab.d.pointer(tab.ctx, x, y, true, false); err != nil {
		t.Fatalf("%s: mouse down at %v,%v: %v", tab.Engine, x, y, err)
	}
}

// MouseUp releases the left mouse button at (x, y).
func MouseUp(t testing.TB, tab *Tab, x, y float64) {
	t.Helper()
	if err := tab.d.pointer(tab.ctx, x, y, false, true); err != nil {
		t.Fatalf("%s: mouse up at %v,%v: %v", tab.Engine, x, y, err)
	}
}

// Modifier is a set of modifier keys held while [Key] types.
type Modifier int

// Modifier keys.
const (
	ModifierShift Modifier = 1 << iota
)

// Key sends key events: a key such as "\t" (Tab), "\r" (Enter), "\u001b"
// (Escape) with optional modifiers held, or text typed one character at a
// time.
func Key(t testing.TB, tab *Tab, keys string, mods ...Modifier) {
	t.Helper()
	var m Modifier
	for _, x := range mods {
		m |= x
	}
	if err := tab.d.keys(tab.ctx, keys, m); err != nil {
		t.Fatalf("%s: keys %q: %v", tab.Engine, keys, err)
	}
}

// SetOffline switches the tab's network emulation: offline fails every
// request (loopback included) as a lost connection and sets
// navigator.onLine to false; online lifts all emulation. Only Chromium
// emulates a network loss; in other engines it ends the test.
func SetOffline(t testing.TB, tab *Tab, offline bool) {
	t.Helper()
	o, ok := tab.d.(offliner)
	if !ok {
		t.Fatalf("%s cannot emulate a network loss", tab.Engine)
	}
	if err := o.setOffline(tab.ctx, offline); err != nil {
		t.Fatalf("%s: set offline %v: %v", tab.Engine, offline, err)
	}
}
