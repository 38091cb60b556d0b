package midcompact_test

import (
	"fmt"
	"os"

	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
)

// Build the atoms of a session's current branch and print the first few.
func ExampleNewSnapshot() {
	f, err := os.Open("testdata/sessions/kinds.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	file, err := pisession.Read(f, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	branch, err := file.Branch("")
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, err := midcompact.NewSnapshot(branch, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range snap.Atoms[:5] {
		fmt.Println(a.Ref, a.Kind, a.ToolProtocol, a.Protected())
	}
	// Output:
	// a0001 user  false
	// a0002 tool_exchange closed false
	// a0003 assistant  false
	// a0004 user  false
	// a0005 tool_exchange abandoned false
}
