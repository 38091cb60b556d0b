package pimessage_test

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

func ExampleMessage() {
	m := pimessage.NewMessage([]byte(`{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"…"},{"type":"text","text":"Hello, "},{"type":"text","text":"Pi."}]}`))
	fmt.Println(m.Role() == pimessage.RoleAssistant)
	fmt.Println(m.Text())
	for _, p := range m.Parts() {
		fmt.Println(p.Type())
	}
	// Output:
	// true
	// Hello, Pi.
	// thinking
	// text
	// text
}
