package jstext_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/jstext"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// TestIsSpace_RealNode: IsSpace and Trim agree with Node 22's /\s/ and
// String.prototype.trim on every code point of the BMP.
func TestIsSpace_RealNode(t *testing.T) {
	in := pitest.Require(t)
	js := `let s=""; for (let c=0;c<0x10000;c++) { if (c>=0xD800&&c<=0xDFFF) continue; if (/\s/.test(String.fromCharCode(c))) s+=c.toString(16)+" "; } console.log(s.trim());
const probe = "\ufeff\u00a0 a\u0085b \u3000\u2028"; console.log(JSON.stringify(probe.trim()));`
	out, err := exec.Command(filepath.Join(in.NodeBin, "node"), "-e", js).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := map[rune]bool{}
	for _, h := range strings.Fields(lines[0]) {
		var r rune
		for _, c := range h {
			r = r*16 + rune(strings.IndexRune("0123456789abcdef", c))
		}
		want[r] = true
	}
	for r := rune(0); r < 0x10000; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if got := jstext.IsSpace(r); got != want[r] {
			t.Errorf("IsSpace(%U) = %v, Node's /\\s/ says %v", r, got, want[r])
		}
	}
	if got, wantTrim := `"`+jstext.Trim("\ufeff\u00a0 a\u0085b \u3000\u2028")+`"`, lines[1]; got != wantTrim {
		t.Errorf("Trim = %s, Node's trim = %s", got, wantTrim)
	}
}
