package stateflow_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/stateflow"
)

// TestNewPatchResult_LoneSurrogate: a lone surrogate kept by jsjson.Decode
// is written back as the \udxxx escape JSON.stringify writes (not U+FFFD),
// in paths, keys and values, with members in their declared order (a
// decoded map's keys sorted, as before); the
// text is byte-identical to what the test Node's JSON.stringify gives.
func TestNewPatchResult_LoneSurrogate(t *testing.T) {
	v, err := jsjson.Decode([]byte(`{"s\ud800":"x\udfff","n":[1,"\udbff"]}`))
	if err != nil {
		t.Fatal(err)
	}
	k, err := jsjson.Decode([]byte(`"k\udc00"`))
	if err != nil {
		t.Fatal(err)
	}
	key := k.(string)
	updates := &stateflow.StateUpdates{
		Projection: "p" + key,
		Effective: []stateflow.UpdateEntry{
			{Path: []string{"cwd", key}, Value: v},
			{Path: []string{"session", "gone"}, Deleted: true},
		},
		LazyNavigation: &stateflow.LazyNavigation{Available: true, Path: "effective.lazy", Keys: map[string]string{key: "v" + key}},
		Cascaded:       []string{key},
	}
	r, err := stateflow.NewPatchResult([]string{"cwd"}, 3, updates, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 2 {
		t.Fatalf("content blocks = %d, want 2", len(r.Content))
	}
	got := r.Content[1]
	const js = `{state_updates:{projection:"pk\udc00",` +
		`effective:[{path:["cwd","k\udc00"],value:{n:[1,"\udbff"],"s\ud800":"x\udfff"}},{path:["session","gone"],deleted:true}],` +
		`lazy_navigation:{available:true,path:"effective.lazy",keys:{"k\udc00":"vk\udc00"}},cascaded:["k\udc00"]}}`
	want := "\n" + `{"state_updates":{"projection":"pk\udc00",` +
		`"effective":[{"path":["cwd","k\udc00"],"value":{"n":[1,"\udbff"],"s\ud800":"x\udfff"}},{"path":["session","gone"],"deleted":true}],` +
		`"lazy_navigation":{"available":true,"path":"effective.lazy","keys":{"k\udc00":"vk\udc00"}},"cascaded":["k\udc00"]}}`
	if got != want {
		t.Fatalf("content[1] =\n%s\nwant\n%s", got, want)
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("content[1] has U+FFFD: %s", got)
	}

	in := pitest.Require(t)
	out, err := exec.Command(filepath.Join(in.NodeBin, "node"), "-e",
		`process.stdout.write("\n"+JSON.stringify(`+js+`))`).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if string(out) != got {
		t.Fatalf("node JSON.stringify =\n%s\ngo =\n%s", out, got)
	}
}
