package fakepi

import (
	"strconv"
	"strings"
)

// Runs that stream more than the default reply.

// boundedOutput streams 40 deltas of 1,000 "a", then one of 32,768 "a" +
// "🙂z", and settles.
func (f *fake) boundedOutput(string) (int, bool) {
	chunk := strings.Repeat("a", 1000)
	for range 40 {
		f.write(delta(chunk))
	}
	f.write(delta(strings.Repeat("a", 32768) + "🙂z"))
	f.settle()
	return 0, false
}

// tool streams tool_execution_start/update/end of "bash".
func (f *fake) tool(string) (int, bool) {
	f.write(obj{"type": "tool_execution_start", "toolCallId": "tool-1", "toolName": "bash", "args": obj{"command": "true"}})
	f.write(obj{"type": "tool_execution_update", "toolCallId": "tool-1", "toolName": "bash", "args": obj{"command": "true"}, "partialResult": obj{"content": []any{}}})
	f.write(obj{"type": "tool_execution_end", "toolCallId": "tool-1", "toolName": "bash", "result": obj{"content": []any{}}, "isError": false})
	f.reply()
	return 0, false
}

func (f *fake) unknownEvent(string) (int, bool) {
	f.write(obj{"type": "future_event", "providerDetail": "ignored"})
	f.reply()
	return 0, false
}

// output streams N text deltas of 100 bytes ("output N", N at most
// 1,000,000; not a number is 0).
func (f *fake) output(text string) (int, bool) {
	n, _ := strconv.Atoi(strings.Fields(text[strings.Index(text, "output ")+len("output "):] + " 0")[0])
	chunk := strings.Repeat("o", 99) + "\n"
	for range min(n, 1_000_000) {
		f.write(delta(chunk))
	}
	f.reply()
	return 0, false
}
