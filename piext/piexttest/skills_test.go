package piexttest_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pikit-dev/pikit/piext/piexttest"
)

func TestCheckSkills(t *testing.T) {
	t.Parallel()
	skill := func(body string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nname: s\ndescription: Plain ASCII.\n---\n" + body)}
	}
	tests := []struct {
		name  string
		fsys  fstest.MapFS
		wants []string // substrings of the error; none: nil
	}{
		{"ascii", fstest.MapFS{"s/SKILL.md": skill("limit 1 to 20\n")}, nil},
		{"latin-1", fstest.MapFS{"s/SKILL.md": skill("caf\u00e9 \u00b7 \u00ff\n")}, nil},
		{"other files may hold any character", fstest.MapFS{"s/SKILL.md": skill("x\n"), "s/references/r.md": {Data: []byte("a \u2192 b \u2026")}}, nil},
		{"a wide character in the body", fstest.MapFS{"s/SKILL.md": skill("one\n`limit` \u2264 3\n")},
			[]string{"s/SKILL.md:6:", "U+2264", "two-byte"}},
		{"each file", fstest.MapFS{"a/SKILL.md": skill("\u2026\n"), "b/SKILL.md": skill("\u2013\n")},
			[]string{"a/SKILL.md:5:", "U+2026", "b/SKILL.md:5:", "U+2013"}},
		{"not UTF-8", fstest.MapFS{"s/SKILL.md": {Data: []byte("\xff\xfe")}}, []string{"s/SKILL.md: not UTF-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := piexttest.CheckSkills(tt.fsys)
			if len(tt.wants) == 0 {
				if err != nil {
					t.Fatalf("CheckSkills = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckSkills = nil, want an error with %q", tt.wants)
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CheckSkills = %v, want %q in it", err, w)
				}
			}
		})
	}
}
