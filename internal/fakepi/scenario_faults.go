package fakepi

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Runs that break: the process exits, the wire carries a bad record, or
// the run fails.

// exitMidTask exits with status 3 after agent_start; "crash" streams
// "partial" first.
func (f *fake) exitMidTask(text string) (int, bool) {
	if strings.Contains(text, "crash") {
		f.write(delta("partial"))
	}
	fmt.Fprintln(os.Stderr, "fakepi: exit mid-task")
	return 3, true
}

// unterminated writes half a record without LF and exits 0.
func (f *fake) unterminated(string) (int, bool) {
	f.raw.Write([]byte(`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","del`))
	return 0, true
}

func (f *fake) malformed(string) (int, bool) {
	f.writeLine([]byte("{not json"))
	f.reply()
	return 0, false
}

// oversized writes a 1,000,100-byte record.
func (f *fake) oversized(string) (int, bool) {
	f.writeLine(append(append([]byte(`{"type":"message_update","pad":"`), bytes.Repeat([]byte("x"), 1_000_100-36)...), '"', '}'))
	f.reply()
	return 0, false
}

func (f *fake) nonObject(string) (int, bool) {
	f.writeLine([]byte("[1,2,3]"))
	f.reply()
	return 0, false
}

func (f *fake) invalidUTF8(string) (int, bool) {
	f.writeLine([]byte("{\"type\":\"message_update\",\"x\":\"\xff\"}"))
	f.reply()
	return 0, false
}

// unexpectedResponse writes a response with an unknown id and a "parse"
// response without id.
func (f *fake) unexpectedResponse(string) (int, bool) {
	f.write(obj{"type": "response", "id": "nobody-asked", "command": "get_state", "success": true})
	f.write(obj{"type": "response", "command": "parse", "success": false, "error": "Failed to parse command"})
	f.reply()
	return 0, false
}

func (f *fake) messageError(string) (int, bool) {
	f.write(obj{"type": "message_update", "assistantMessageEvent": obj{"type": "error", "reason": "error", "error": providerDetail}})
	f.write(assistantEnd("", "error", providerDetail))
	f.settle()
	return 0, false
}

func (f *fake) retryFailure(string) (int, bool) {
	f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": true})
	f.write(obj{"type": "auto_retry_start", "attempt": 3, "maxAttempts": 3, "delayMs": 1, "errorMessage": providerDetail})
	f.write(obj{"type": "auto_retry_end", "success": false, "attempt": 3, "finalError": providerDetail})
	f.write(obj{"type": "agent_settled", "aborted": false})
	return 0, false
}

func (f *fake) compactionFailure(string) (int, bool) {
	f.write(obj{"type": "compaction_start", "reason": "threshold"})
	f.write(obj{"type": "compaction_end", "reason": "threshold", "result": nil, "aborted": false, "willRetry": false, "errorMessage": providerDetail})
	f.settle()
	return 0, false
}
