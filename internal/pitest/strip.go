package pitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// stripScript prints stdin's TypeScript as JavaScript: Node's own type
// stripping (mode "strip": every type annotation becomes blanks, so lines
// and columns stay where they were).
const stripScript = `import { stripTypeScriptTypes } from "node:module";
import * as fs from "node:fs";
process.stdout.write(stripTypeScriptTypes(fs.readFileSync(0, "utf8"), { mode: "strip" }));
`

// generatedHeader starts every file [CheckStripped] writes: the source's
// name and the command that rewrites it.
const generatedHeader = "// Code generated from %s by Node's type stripping (%s); DO NOT EDIT.\n"

// CheckStripped fails the test unless js (the embedded content of the
// file jsPath) is the TypeScript ts (of the file tsName) with its types
// stripped ([StripTypes]) under the generated-code header naming
// generator; with update it rewrites jsPath instead (what generator runs).
func CheckStripped(t testing.TB, tsName string, ts []byte, jsPath string, js []byte, generator string, update bool) {
	t.Helper()
	want := append([]byte(fmt.Sprintf(generatedHeader, tsName, generator)), StripTypes(t, ts)...)
	if update {
		if err := os.WriteFile(jsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(js, want) {
		t.Fatalf("%s is not %s with its types stripped: run %s", jsPath, tsName, generator)
	}
}

// StripTypes returns the TypeScript src as JavaScript by the Node 22 of
// the test dependencies (types blanked, positions kept): what Pi loads
// natively, without its jiti transpile, for a file written in TypeScript.
// A failure (Node missing, syntax that is not erasable) fails the test.
func StripTypes(t testing.TB, src []byte) []byte {
	t.Helper()
	in := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(in.NodeBin, "node"), "--no-warnings", "--input-type=module", "-e", stripScript)
	cmd.Stdin = bytes.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pitest: strip types: %v\n%s", err, stderr.String())
	}
	return out
}
