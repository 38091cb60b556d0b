package extension_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// canonicalJS is upstream's file encoding (reference §2.2) as Node runs it:
// JSON.stringify with object keys sorted recursively, one "\n".
const canonicalJS = `const sort = (v) => Array.isArray(v) ? v.map(sort) : v && typeof v === "object" ?
  Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v;
let s = ""; process.stdin.on("data", (d) => s += d).on("end", () => process.stdout.write(JSON.stringify(sort(JSON.parse(s).cwd)) + "\n"));`

// What the store writes for strings and keys with lone surrogates is byte
// for byte what upstream writes (JSON.stringify escapes a lone surrogate as
// \udxxx): the first CWD patch line equals Node's canonical encoding of the
// authored scope patch (reference §2.2, §6.3 "lone surrogates").
func TestStoreLoneSurrogateParity(t *testing.T) {
	in := pitest.Require(t)
	args := `{"cwd":{"contract":{"lone":"a\ud800b","tail":"\udfff","pair":"\ud83d\ude00","\udc00key":"k","z\ue000":1,"z\ud83d\ude00":2,"ctl":"\u0001\u2028<&>"}}}`
	node := exec.Command(filepath.Join(in.NodeBin, "node"), "-e", canonicalJS)
	node.Stdin = strings.NewReader(args)
	want, err := node.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if !strings.Contains(string(want), `\ud800`) {
		t.Fatalf("Node's encoding lacks the escape: %s", want)
	}
	root := filepath.Join(t.TempDir(), "state-flow")
	l, err := store.NewLayout(root, "/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(l, store.DefaultOptions())
	if _, err := st.PatchState(t.Context(), []byte(args), nil); err != nil {
		t.Fatal(err)
	}
	// read_state answers as JSON.stringify would, too.
	if got, err := st.ReadState(t.Context(), store.ReadPathArgs("contract.lone")); err != nil || got != `{"value":"a\ud800b"}` {
		t.Errorf("read_state = %q, %v", got, err)
	}
	got, err := os.ReadFile(filepath.Join(root, store.CWDKey("/proj"), "patches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("patches.jsonl:\n got %q\nwant %q", got, want)
	}
}

// End to end: a lone surrogate in the model's patch_state arguments goes
// through Pi, the bridge and the store and lands on disk as \udxxx.
func TestRealPi_LoneSurrogateReachesStore(t *testing.T) {
	t.Parallel()
	script := func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role != "tool" && strings.Contains(r.LastUserText(), "LONE") {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_l", Name: "patch_state", Arguments: []string{`{"cwd":{"contract":{"s":"x\ud800y"}}}`}}}}
		}
		return model(r)
	}
	h := newHarnessScript(t, "active", script)
	c := h.start(t)
	ctx := testCtx(t)
	evs := prompt(t, ctx, c, "LONE surrogate")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr {
		t.Fatalf("patch_state: %q", text)
	}
	got, err := os.ReadFile(filepath.Join(h.env.AgentDir, "state-flow", store.CWDKey(h.env.Dir), "patches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"contract":{"s":"x\ud800y"}}` + "\n"; string(got) != want {
		t.Errorf("patches.jsonl = %q, want %q", got, want)
	}
}
