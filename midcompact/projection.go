package midcompact

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pimessage"
)

// recallHint is the v0.7 last line of a summary wrapper (package doc,
// "v0.6 / v0.7 choices").
const recallHintFormat = `Use midcompact(request={action:"recall_read", block:"%s"}) if exact details are needed.`

// SummaryContent is the text of a block's summary wrapper (reference §4.3):
//
//	[Midcompact summary <id>: <topic>]   (or "[Midcompact summary <id>]")
//	<summary>
//
//	Original block: <id>
//	Use midcompact(request={action:"recall_read", block:"<id>"}) if exact details are needed.
func SummaryContent(blockID, topic, summary string) string {
	head := "[Midcompact summary " + blockID + "]"
	if topic != "" {
		head = "[Midcompact summary " + blockID + ": " + topic + "]"
	}
	return head + "\n" + summary + "\n\nOriginal block: " + blockID + "\n" +
		fmt.Sprintf(recallHintFormat, blockID)
}

// replacementChars is the code-point length of the wrapper built with block
// id "draft" (as long as "c0001"), the factual replacement size recorded on
// a range (reference §3.2).
func replacementChars(topic, summary string) int {
	return utf8.RuneCountInString(SummaryContent("draft", topic, summary))
}

// summaryMessage builds the wrapper message that replaces a block:
// {role:"custom", customType:"midcompact-summary", display:true, content,
// details:{blockId, originalApproxTokens, topic?}, timestamp}.
func summaryMessage(b *Block, timestamp float64) Message {
	var details jsjson.Object
	details.String("blockId", b.ID)
	details.Raw("originalApproxTokens", jsNumber(float64(b.OriginalApproxTokens)))
	if b.Topic != "" {
		details.String("topic", b.Topic)
	}
	var o jsjson.Object
	o.String("role", pimessage.RoleCustom)
	o.String("customType", summaryCustomType)
	o.Raw("display", []byte("true"))
	o.String("content", SummaryContent(b.ID, b.Topic, b.Summary))
	o.Raw("details", rawObject(&details))
	o.Raw("timestamp", jsNumber(timestamp))
	m, _ := ParseMessage(rawObject(&o)) // an object we just built
	return m
}

// Projection is the result of [Project]: the messages to send, and which
// blocks replaced something.
type Projection struct {
	Messages []Message
	// Applied lists the ids of the blocks that replaced messages; a block
	// whose keys match nowhere is skipped (fail-open per block).
	Applied []string
	// Overlap is true when two blocks' matches overlapped, in which case
	// Messages is the input unchanged (fail-open for all).
	Overlap bool
}

// Project replaces each block's first contiguous exact run of message keys
// with one summary wrapper whose timestamp is the first replaced message's
// (nowMs when it has none), so the projected prefix stays byte-stable
// (seed 001 §Projection; reference §4.2). keys are msgs' [MessageKey]s. A
// block with no messageKeys matches nothing. The result shares no slice
// with msgs.
func Project(msgs []Message, keys []string, blocks []Block, nowMs float64) Projection {
	p, _ := projectSources(msgs, keys, blocks, nowMs)
	return p
}

// projectSources is [Project] that also returns, for each output message,
// the index of the input message it is or (a wrapper) starts at.
func projectSources(msgs []Message, keys []string, blocks []Block, nowMs float64) (Projection, []int) {
	type match struct{ start, end, block int }
	var matches []match
	for bi := range blocks {
		if at := findRun(keys, blocks[bi].MessageKeys); at >= 0 {
			matches = append(matches, match{at, at + len(blocks[bi].MessageKeys), bi})
		}
	}
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].start < matches[j].start })
	identity := func() []int {
		src := make([]int, len(msgs))
		for i := range src {
			src[i] = i
		}
		return src
	}
	for i := 1; i < len(matches); i++ {
		if matches[i].start < matches[i-1].end {
			return Projection{Messages: append([]Message(nil), msgs...), Overlap: true}, identity()
		}
	}
	out := Projection{Messages: make([]Message, 0, len(msgs))}
	src := make([]int, 0, len(msgs))
	keep := func(from, to int) {
		out.Messages = append(out.Messages, msgs[from:to]...)
		for i := from; i < to; i++ {
			src = append(src, i)
		}
	}
	at := 0
	for _, m := range matches {
		keep(at, m.start)
		ts := nowMs
		if first := &msgs[m.start]; first.HasTimestamp {
			ts = first.Timestamp
		}
		out.Messages = append(out.Messages, summaryMessage(&blocks[m.block], ts))
		src = append(src, m.start)
		out.Applied = append(out.Applied, blocks[m.block].ID)
		at = m.end
	}
	keep(at, len(msgs))
	return out, src
}

// findRun is the first index where run occurs contiguously in keys, or -1.
func findRun(keys, run []string) int {
	if len(run) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(run) <= len(keys); i++ {
		for k, key := range run {
			if keys[i+k] != key {
				continue outer
			}
		}
		return i
	}
	return -1
}
