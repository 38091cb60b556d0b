// The Runtime's view of Pi's events: mapping an RPC event to the snapshot.

package runtime

import (
	"strconv"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/pirpc"
)

// handleEvent processes one event of process p in stdout order. It
// returns false with a fixed reason on a protocol failure, and the id of a
// dialog to answer cancelled:true (after the lock is released).
func (r *Runtime) handleEvent(p *piProc, ev pirpc.Event) (ok bool, reason string, dialog string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != p {
		return true, "", ""
	}
	switch ev := ev.(type) {
	case *pirpc.ProtocolError:
		return false, protocolMessage(ev), ""
	case *pirpc.ExtensionUIRequest:
		if !ev.NeedsResponse() {
			return true, "", ""
		}
		if ev.ID == "" {
			return false, errMalformedEvent, ""
		}
		return true, "", ev.ID
	}
	if r.phase != SessionBusy || r.task == nil || r.task.Status.Terminal() {
		return true, "", ""
	}
	r.applyEventLocked(ev)
	r.commitLocked()
	return true, "", ""
}

// applyEventLocked maps one Pi event onto the active task (seed 000 event
// mapping table). Activities change only while running;
// output also grows while cancelling. Unknown events change nothing.
func (r *Runtime) applyEventLocked(ev pirpc.Event) {
	t := r.task
	running := t.Status == TaskRunning
	activity := func(a string) {
		if running {
			t.Activity = a
		}
	}
	fail := func(msg string) {
		if running {
			r.pendingFail = msg
			t.Activity = actFailed
		}
	}
	switch ev := ev.(type) {
	case *pirpc.AgentStart:
		activity(actWorking)
	case *pirpc.AgentEnd:
		activity(actTurnFinished)
	case *pirpc.MessageUpdate:
		switch ev.AssistantMessageEvent.Type {
		case "text_delta":
			t.Output, t.OutputTruncated = appendOutput(t.Output, t.OutputTruncated, ev.AssistantMessageEvent.Delta)
		case "error":
			fail(classifyFailure(string(ev.AssistantMessageEvent.Error), errMessageError))
		}
	case *pirpc.MessageEnd:
		if ev.Message.Role == pimessage.RoleAssistant && ev.Message.StopReason == "error" && running {
			// Pi may retry it (auto_retry_start); if not, it ends the task.
			r.providerFail = classifyFailure(ev.Message.ErrorMessage, errMessageError)
		}
	case *pirpc.ToolExecutionStart:
		activity("Running " + toolLabel(ev.ToolName))
	case *pirpc.ToolExecutionUpdate:
		activity("Running " + toolLabel(ev.ToolName))
	case *pirpc.ToolExecutionEnd:
		if ev.IsError {
			activity("Tool failed " + toolLabel(ev.ToolName))
		} else {
			activity("Finished " + toolLabel(ev.ToolName))
		}
	case *pirpc.CompactionStart:
		activity(actCompacting)
	case *pirpc.CompactionEnd:
		switch {
		case ev.ErrorMessage != "":
			fail(errCompactionFailed)
		case ev.WillRetry:
			activity(actRetryAfterCompact)
		default:
			activity(actCompacted)
		}
	case *pirpc.AutoRetryStart:
		r.providerFail = ""
		if validCount(ev.Attempt) && validCount(ev.MaxAttempts) {
			activity(actRetrying + " (" + strconv.Itoa(ev.Attempt) + "/" + strconv.Itoa(ev.MaxAttempts) + ")")
		} else {
			activity(actRetrying)
		}
	case *pirpc.AutoRetryEnd:
		if ev.Success {
			activity(actWorking)
		} else {
			fail(classifyFailure(ev.FinalError, errRetriesExhausted))
		}
	case *pirpc.AgentSettled:
		switch {
		case t.Status == TaskCancelling:
			r.finishTaskLocked(TaskCancelled, actStopped, "")
		case r.pendingFail != "":
			r.finishTaskLocked(TaskFailed, actFailed, r.pendingFail)
		case r.providerFail != "":
			r.finishTaskLocked(TaskFailed, actFailed, r.providerFail)
		default:
			r.finishTaskLocked(TaskCompleted, actCompleted, "")
		}
		r.log.Info("taskbar runtime: task settled", "status", string(t.Status))
	}
}

func validCount(n int) bool { return n >= 1 && n <= 999 }
