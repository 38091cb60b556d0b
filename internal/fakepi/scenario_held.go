package fakepi

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Runs that stay open: held until abort, or waiting for a dialog's answer.

// holdRun starts a run held until abort ("hold", "reject abort", "ignore
// abort"): it streams "holding".
func (f *fake) holdRun(abortMode string) {
	f.hold(abortMode)
	f.write(obj{"type": "message_start", "message": assistant("", "pending", "")})
	f.write(delta("holding"))
}

// spawnChild starts this binary as a "sleep-300" fake in the fake's
// process group, like a tool's command, streams its pid and holds.
func (f *fake) spawnChild(string) (int, bool) {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakepi: cannot spawn child")
		return 3, true
	}
	child := exec.Command(exe, "--mode", "rpc")
	child.Env = append(os.Environ(), Config{Scenario: "sleep-300"}.Env()...)
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fakepi: cannot spawn child")
		return 3, true
	}
	f.hold("")
	f.write(delta(strconv.Itoa(child.Process.Pid)))
	return 0, false
}

// runTool holds a run with a bash tool started ("run tool"); "activity
// events" adds the activity records of the package doc.
func (f *fake) runTool(text string) (int, bool) {
	f.hold("")
	f.write(delta("new output"))
	f.write(obj{"type": "tool_execution_start", "toolCallId": "t1", "toolName": "bash", "args": obj{}})
	if strings.Contains(text, "activity events") {
		f.write(obj{"type": "tool_execution_end", "toolCallId": "t1", "toolName": "bash", "result": obj{"content": []any{}}, "isError": true})
		f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": true})
		f.write(obj{"type": "compaction_start", "reason": "overflow"})
		f.write(obj{"type": "compaction_end", "reason": "overflow", "result": obj{}, "aborted": false, "willRetry": true})
		f.write(obj{"type": "auto_retry_start", "attempt": 2, "maxAttempts": 3, "delayMs": 1, "errorMessage": providerDetail})
		f.write(obj{"type": "future_event", "providerDetail": "ignored"})
	}
	return 0, false
}

// dialogRequest sends a confirm and a notify request; the confirm's
// answer is streamed ([fake.dialogAnswer]).
func (f *fake) dialogRequest(string) (int, bool) {
	f.dialogID, f.dialogDelta = "fake-dialog-1", true
	f.write(obj{"type": "extension_ui_request", "id": f.dialogID, "method": "confirm", "title": "Continue?", "message": "Continue?"})
	f.write(obj{"type": "extension_ui_request", "id": "fake-notify-1", "method": "notify", "message": "fyi"})
	return 0, false
}

// dialog sends a confirm request whose answer becomes a notify.
func (f *fake) dialog(string) (int, bool) {
	f.dialogID, f.dialogDelta = "fake-dialog-1", false
	f.write(obj{"type": "extension_ui_request", "id": f.dialogID, "method": "confirm", "title": "Continue?", "message": "Continue?"})
	return 0, false
}

// abort answers an abort; a held run ends as its abortMode says.
func (f *fake) abort(c command) {
	if !f.holding {
		f.respond(c, nil)
		return
	}
	f.aborts++
	switch f.abortMode {
	case "reject":
		f.fail(c, providerDetail)
	case "ignore":
		if f.aborts > 1 {
			f.write(delta(" second abort"))
		}
		f.respond(c, nil)
	default:
		f.holding = false
		f.write(assistantEnd("partial", "aborted", "Request was aborted"))
		f.write(obj{"type": "turn_end", "message": assistant("partial", "aborted", "Request was aborted"), "toolResults": []any{}})
		f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": false})
		f.write(obj{"type": "agent_settled", "aborted": true})
		f.respond(c, nil)
	}
}
