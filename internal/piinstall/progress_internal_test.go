package piinstall

import (
	"strings"
	"testing"
)

func TestNPMProgress_Filters(t *testing.T) {
	var out strings.Builder
	p := &npmProgress{w: &out}
	var in strings.Builder
	for range 25 {
		in.WriteString("npm http fetch GET 200 https://registry.example/x.tgz 12ms (cache miss)\n")
	}
	in.WriteString("npm http cache isexe@https://registry.example/isexe.tgz 0ms (cache hit)\n")
	in.WriteString("npm warn EBADENGINE Unsupported engine\n")
	in.WriteString("npm warn install-scripts 2 packages have install scripts\n")
	in.WriteString("npm error code E404\n")
	// Written in odd pieces, as a pipe delivers them.
	b := []byte(in.String())
	for len(b) > 0 {
		n := min(7, len(b))
		p.Write(b[:n])
		b = b[n:]
	}
	got := out.String()
	want := "  npm: 25 downloads done\n  npm: npm error code E404\n"
	if got != want {
		t.Errorf("progress = %q, want %q", got, want)
	}
}
