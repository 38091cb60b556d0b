package pirpc_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/pikit-dev/pikit/pirpc"
)

// A prompt run, answering every extension dialog with cancelled:true.
func Example() {
	ctx := context.Background()
	c, err := pirpc.Start(ctx, pirpc.Options{
		Executable: "pi",
		Args:       []string{"--no-session"},
	})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	defer c.Close(ctx)

	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "Say hello."}); err != nil {
		fmt.Println("prompt:", err)
		return
	}
	var text strings.Builder
	for ev := range c.Events() {
		switch ev := ev.(type) {
		case *pirpc.MessageUpdate:
			if ev.AssistantMessageEvent.Type == "text_delta" {
				text.WriteString(ev.AssistantMessageEvent.Delta)
			}
		case *pirpc.ExtensionUIRequest:
			if ev.NeedsResponse() {
				c.CancelUI(ctx, ev.ID)
			}
		case *pirpc.ProtocolError:
			fmt.Println("protocol:", ev)
		case *pirpc.AgentSettled:
			fmt.Println(text.String())
			return
		}
	}
	fmt.Println("pi exited:", c.Err())
}

// Replaying a recorded stdout.
func ExampleDecoder() {
	d := pirpc.NewDecoder(strings.NewReader(
		`{"type":"agent_settled","aborted":true}` + "\n" + `[1]` + "\n" + `{"type":"future"}` + "\n"))
	for {
		rec, err := d.Next()
		if err != nil {
			if pe, ok := err.(*pirpc.ProtocolError); ok {
				fmt.Println("bad record:", pe.Kind)
				continue
			}
			break // io.EOF
		}
		switch rec := rec.(type) {
		case *pirpc.AgentSettled:
			fmt.Println("settled, aborted:", rec.Aborted)
		case *pirpc.RawEvent:
			fmt.Println("unknown event:", rec.Type)
		}
	}
	// Output:
	// settled, aborted: true
	// bad record: pirpc: record is not an object
	// unknown event: future
}
