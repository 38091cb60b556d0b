package fakepi

import (
	"slices"
	"strings"
)

// prompt answers prompt, steer and follow_up: queued during a held run,
// refused for "model-unknown", a control keyword (the reset keywords,
// "reject"), else a started run whose records the first matching keyword
// of [runScenarios] writes. It returns the process's exit status and
// whether to exit.
func (f *fake) prompt(c command) (int, bool) {
	text := strings.ToLower(f.keywords + " " + c.Message)
	has := func(k string) bool { return strings.Contains(text, k) }
	if f.holding {
		f.queue(c)
		return 0, false
	}
	if f.words["model-unknown"] {
		f.fail(c, NoAPIKeyError)
		return 0, false
	}
	abortMode, started := f.control(c, has)
	if !started {
		return 0, false
	}
	f.respond(c, obj{"disposition": "started"})
	f.write(obj{"type": "agent_start"})
	f.write(obj{"type": "turn_start"})
	if abortMode != "" || has("hold") {
		f.holdRun(abortMode)
		return 0, false
	}
	for _, s := range runScenarios {
		if slices.ContainsFunc(s.keywords, has) {
			return s.run(f, text)
		}
	}
	f.reply()
	return 0, false
}

// queue answers a prompt during a held run: queued (a follow-up) when it
// has streamingBehavior, refused as Pi refuses it otherwise.
func (f *fake) queue(c command) {
	if c.Type == "prompt" && c.StreamingBehavior == "" {
		f.fail(c, "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
		return
	}
	f.queued = append(f.queued, c.Message)
	f.write(obj{"type": "queue_update", "steering": []string{}, "followUp": f.queued})
	f.respond(c, obj{"disposition": "queued"})
}

// control answers the keywords that start no run ("reject reset", "fail
// reset", "hang reset", "reject"), started false; else started is true and
// abortMode is the held run's answer to abort ("reject abort", "ignore
// abort"), "" for none.
func (f *fake) control(c command, has func(string) bool) (abortMode string, started bool) {
	for _, m := range []string{"reject", "fail", "hang"} {
		if has(m + " reset") {
			f.resetMode = m
			f.respond(c, obj{"disposition": "handled"})
			return "", false
		}
	}
	switch {
	case has("reject abort"):
		return "reject", true
	case has("ignore abort"):
		return "ignore", true
	case has("reject"):
		f.fail(c, providerDetail)
		return "", false
	}
	return "", true
}

// runScenario is one keyword row of a started run: run writes its records
// after agent_start and turn_start and returns the process's exit status
// and whether to exit. A row whose run goes on normally ends with
// [fake.reply].
type runScenario struct {
	keywords []string // any one matches, by substring
	run      func(f *fake, text string) (int, bool)
}

// runScenarios are the run keywords in the order the package doc lists
// them; the first matching row wins.
var runScenarios = []runScenario{
	{[]string{"spawn child"}, (*fake).spawnChild},
	{[]string{"run tool", "activity events"}, (*fake).runTool},
	{[]string{"dialog request"}, (*fake).dialogRequest},
	{[]string{"dialog"}, (*fake).dialog},
	{[]string{"exit mid-task", "crash"}, (*fake).exitMidTask},
	{[]string{"unterminated"}, (*fake).unterminated},
	{[]string{"malformed"}, (*fake).malformed},
	{[]string{"oversized"}, (*fake).oversized},
	{[]string{"non-object"}, (*fake).nonObject},
	{[]string{"invalid-utf8"}, (*fake).invalidUTF8},
	{[]string{"unexpected response"}, (*fake).unexpectedResponse},
	{[]string{"message error"}, (*fake).messageError},
	{[]string{"retry failure"}, (*fake).retryFailure},
	{[]string{"compaction failure"}, (*fake).compactionFailure},
	{[]string{"bounded output"}, (*fake).boundedOutput},
	{[]string{"tool"}, (*fake).tool},
	{[]string{"unknown event"}, (*fake).unknownEvent},
	{[]string{"output "}, (*fake).output},
}

// reply streams [DefaultReply] in two deltas and settles the run.
func (f *fake) reply() {
	first, rest, _ := strings.Cut(DefaultReply, " ")
	f.write(obj{"type": "message_start", "message": assistant("", "pending", "")})
	f.write(delta(first + " "))
	f.write(delta(rest))
	f.write(assistantEnd(DefaultReply, "stop", ""))
	f.write(obj{"type": "turn_end", "message": assistant(DefaultReply, "stop", ""), "toolResults": []any{}})
	f.settle()
}
