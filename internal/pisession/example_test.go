package pisession_test

import (
	"fmt"
	"strings"

	"github.com/pikit-dev/pikit/internal/pisession"
)

func ExampleRead() {
	src := `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"model_change","id":"m","parentId":null,"provider":"fake","modelId":"fake-model"}
{"type":"message","id":"u1","parentId":"m","message":{"role":"user","content":"hi"}}
not json: skipped, as Pi skips it
{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[]}}
{"type":"message","id":"u2","parentId":"m","message":{"role":"user","content":"again"}}
`
	f, err := pisession.Read(strings.NewReader(src), &pisession.Options{MaxRecord: 64 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("session", f.Header.ID, "entries", len(f.Entries), "skipped line", f.Skipped[0].Line)
	for _, leaf := range []string{"a1", ""} { // "" is the last entry
		path, _ := f.Branch(leaf)
		var roles []string
		for _, e := range path {
			if m, err := e.Message(); err == nil {
				roles = append(roles, e.ID+":"+m.Role())
			}
		}
		fmt.Println(len(path), roles)
	}
	// Output:
	// session s1 entries 4 skipped line 4
	// 3 [u1:user a1:assistant]
	// 2 [u2:user]
}
