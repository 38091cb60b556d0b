package fakepi

import "github.com/pikit-dev/pikit/internal/pimessage"

func assistant(text, stop, errMsg string) obj {
	m := obj{"role": pimessage.RoleAssistant, "content": []any{obj{"type": pimessage.KindText, "text": text}}, "api": "openai-completions",
		"provider": "test", "model": "fake-pi", "stopReason": stop, "timestamp": 1}
	if errMsg != "" {
		m["errorMessage"] = errMsg
	}
	return m
}

func assistantEnd(text, stop, errMsg string) obj {
	return obj{"type": "message_end", "message": assistant(text, stop, errMsg)}
}

func delta(s string) obj {
	return obj{"type": "message_update", "assistantMessageEvent": obj{"type": "text_delta", "contentIndex": 0, "delta": s}}
}

// settle ends a run the normal way.
func (f *fake) settle() {
	f.write(obj{"type": "agent_end", "messages": []any{}, "willRetry": false})
	f.write(obj{"type": "agent_settled", "aborted": false})
}

// hold keeps the run open until abort; mode is the fake's answer to it.
func (f *fake) hold(mode string) {
	f.holding, f.abortMode, f.aborts = true, mode, 0
}
