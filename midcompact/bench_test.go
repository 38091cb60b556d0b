package midcompact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// syntheticBranch is a linear session of n entries cycling through user,
// assistant-with-tool-call, tool result and assistant text messages, with
// a custom entry every 50.
func syntheticBranch(b *testing.B, n int) []pisession.Entry {
	b.Helper()
	var sb strings.Builder
	sb.WriteString(testHeader + "\n")
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("e%d", i)
		var body string
		switch {
		case i%50 == 49:
			body = `"type":"custom","customType":"probe","data":{"i":` + fmt.Sprint(i) + `}`
		case i%4 == 0:
			body = fmt.Sprintf(`"type":"message","message":{"role":"user","content":[{"type":"text","text":"request %d: please change the handler and run the tests"}],"timestamp":%d}`, i, 1700000000000+i)
		case i%4 == 1:
			body = fmt.Sprintf(`"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"Running it."},{"type":"toolCall","id":"call%d","name":"bash","arguments":{"command":"go test ./..."}}],"api":"openai-completions","provider":"fake","model":"fake-model","usage":{"input":1234,"output":56,"cacheRead":0,"cacheWrite":0,"totalTokens":1290,"cost":{"input":0.0012,"output":0.00056,"total":0.00176}},"stopReason":"toolUse","timestamp":%d}`, i, 1700000000000+i)
		case i%4 == 2:
			body = fmt.Sprintf(`"type":"message","message":{"role":"toolResult","toolCallId":"call%d","toolName":"bash","content":[{"type":"text","text":"ok  \tgithub.com/x/y\t0.%03ds"}],"isError":false,"timestamp":%d}`, i-1, i%1000, 1700000000000+i)
		default:
			body = fmt.Sprintf(`"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"All tests pass after change %d."}],"stopReason":"stop","timestamp":%d}`, i, 1700000000000+i)
		}
		fmt.Fprintf(&sb, `{%s,"id":%q,"parentId":%s,"timestamp":"2026-09-08T10:00:00.000Z"}`+"\n", body, id, parent)
		parent = fmt.Sprintf("%q", id)
	}
	f, err := pisession.Read(strings.NewReader(sb.String()), nil)
	if err != nil {
		b.Fatal(err)
	}
	path, err := f.Branch("")
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkNewSnapshot builds the anchor snapshot (session-context port,
// keys, entry mapping, atoms) at 1k, 10k and 100k entries and reports
// ns/entry; building is linear when ns/entry stays flat. The baseline is
// BuildSessionContext alone on the same branch.
func BenchmarkNewSnapshot(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		branch := syntheticBranch(b, n)
		b.Run(fmt.Sprintf("baseline-context/entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := BuildSessionContext(branch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
		b.Run(fmt.Sprintf("snapshot/entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewSnapshot(branch, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
}

// transcript15MB is ~15 MB of messages (1 KiB text each) and 50 blocks of
// 10 consecutive messages spread over it.
func transcript15MB(b *testing.B) ([]Message, []string, []Block) {
	b.Helper()
	text := strings.Repeat("lorem ipsum dolor sit amet ", 38)
	var msgs []Message
	for i := 0; len(msgs) < 15_000; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m, err := ParseMessage([]byte(fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":"%s %d"}],"timestamp":%d}`, role, text, i, 1700000000000+i)))
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	keys, err := keyMessages(msgs)
	if err != nil {
		b.Fatal(err)
	}
	var blocks []Block
	for k := range 50 {
		at := 100 + k*290
		blocks = append(blocks, Block{ID: "c" + pad4(k+1), Summary: "summary", MessageKeys: keys[at : at+10]})
	}
	return msgs, keys, blocks
}

// BenchmarkProject measures the context-hook work for 50 committed blocks
// over a 15 MB transcript with keys already known (the incremental path
// keys each message once), against a baseline that only copies the
// message list; and, separately, keying the whole transcript.
func BenchmarkProject(b *testing.B) {
	msgs, keys, blocks := transcript15MB(b)
	b.Run("baseline-copy", func(b *testing.B) {
		for b.Loop() {
			_ = append([]Message(nil), msgs...)
		}
	})
	b.Run("project-50-blocks", func(b *testing.B) {
		for b.Loop() {
			if p := Project(msgs, keys, blocks, 0); len(p.Applied) != 50 {
				b.Fatalf("applied %d", len(p.Applied))
			}
		}
	})
	b.Run("key-all-messages", func(b *testing.B) {
		b.SetBytes(int64(len(msgs)) * int64(len(msgs[0].Raw)))
		for b.Loop() {
			if _, err := keyMessages(msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
