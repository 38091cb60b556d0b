package midcompact

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/pisession"
)

func msgs(t *testing.T, raws ...string) ([]Message, []string) {
	t.Helper()
	var out []Message
	for _, r := range raws {
		m, err := ParseMessage([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	keys, err := keyMessages(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, keys
}

// TestProject: exact contiguous matches are replaced by one wrapper each
// (KEEP holes stay), a block that matches nowhere is skipped (fail-open per
// block), overlapping matches leave everything unchanged (fail-open for
// all), and the wrapper takes the first replaced message's timestamp
// (seed 001 §Projection; reference §4.2).
func TestProject(t *testing.T) {
	m, k := msgs(t,
		`{"role":"user","content":"one","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"text","text":"two"}],"timestamp":2}`,
		`{"role":"user","content":"keep","timestamp":3}`,
		`{"role":"assistant","content":[{"type":"text","text":"four"}]}`,
		`{"role":"user","content":"five","timestamp":5}`,
	)
	b1 := Block{ID: "c0001", Summary: "S1", MessageKeys: k[0:2], Sizes: Sizes{OriginalApproxTokens: 7}}
	b2 := Block{ID: "c0002", Topic: "t", Summary: "S2", MessageKeys: k[3:5]}
	missing := Block{ID: "c0003", Summary: "gone", MessageKeys: []string{"user:9:0000000000000000"}}
	p := Project(m, k, []Block{b2, missing, b1}, 42)
	if p.Overlap || strings.Join(p.Applied, ",") != "c0001,c0002" || len(p.Messages) != 3 {
		t.Fatalf("projection = %+v", p)
	}
	if p.Messages[0].BlockID != "c0001" || p.Messages[0].Timestamp != 1 || p.Messages[1].ContentString != "keep" {
		t.Errorf("first = %s, second = %s", p.Messages[0].Raw, p.Messages[1].Raw)
	}
	if p.Messages[2].Timestamp != 42 {
		t.Errorf("wrapper without a first timestamp: %s", p.Messages[2].Raw)
	}
	wantRaw := `{"role":"custom","customType":"midcompact-summary","display":true,"content":"[Midcompact summary c0001]\nS1\n\nOriginal block: c0001\nUse midcompact(request={action:\"recall_read\", block:\"c0001\"}) if exact details are needed.","details":{"blockId":"c0001","originalApproxTokens":7},"timestamp":1}`
	if string(p.Messages[0].Raw) != wantRaw {
		t.Errorf("wrapper:\n got %s\nwant %s", p.Messages[0].Raw, wantRaw)
	}
	if !strings.HasPrefix(p.Messages[2].ContentString, "[Midcompact summary c0002: t]\nS2\n") {
		t.Errorf("topic header: %q", p.Messages[2].ContentString)
	}
	if len(m) != 5 {
		t.Error("input changed")
	}

	overlap := Block{ID: "c0004", Summary: "x", MessageKeys: k[1:3]}
	p = Project(m, k, []Block{b1, overlap, b2}, 0)
	if !p.Overlap || len(p.Messages) != 5 || p.Applied != nil {
		t.Errorf("overlap: %+v", p)
	}
	if p := Project(m, k, nil, 0); len(p.Messages) != 5 {
		t.Error("no blocks")
	}
}

// TestSummaryMessage_RealNode checks the wrapper byte for byte against
// JSON.stringify of the same message: '<', '>', '&', U+2028 and U+2029 in
// the topic and summary stay raw (encoding/json would write \u003c).
func TestSummaryMessage_RealNode(t *testing.T) {
	o := newOracle(t)
	for _, b := range []Block{
		{ID: "c0001", Summary: "plain", Sizes: Sizes{OriginalApproxTokens: 7}},
		{ID: "c0002", Topic: "<t> & u", Summary: "a<b>&c\u2028d\u2029e\x01\"", Sizes: Sizes{OriginalApproxTokens: 1 << 40}},
	} {
		m := summaryMessage(&b, 1795980379562.5)
		var want struct{ Text string }
		o.ask(t, map[string]any{"op": "stringify", "message": m.Raw}, &want)
		if string(m.Raw) != want.Text {
			t.Errorf("block %s:\n got %s\nwant %s", b.ID, m.Raw, want.Text)
		}
		if b.Topic != "" && !strings.Contains(string(m.Raw), `"topic":"<t> & u"`) {
			t.Errorf("block %s: topic not as JSON.stringify writes it: %s", b.ID, m.Raw)
		}
	}
}

func TestReplacementChars(t *testing.T) {
	want := utf8.RuneCountInString(SummaryContent("c0001", "topic", "中文 summary"))
	if got := replacementChars("topic", "中文 summary"); got != want {
		t.Errorf("replacementChars = %d, want %d (draft is as long as c0001)", got, want)
	}
}

// TestRecall_ExactOriginal: recall renders the original entries (never the
// projection), honours the caps and lists blocks oldest first with the
// pattern over id/topic/summary.
func TestRecall_ExactOriginal(t *testing.T) {
	f := fixture(t, "committed")
	st := Restore(branchOf(t, f, "")).State
	text, err := RecallRead(st, "c0002", false, f.Entry)
	if err != nil {
		t.Fatal(err)
	}
	if text != "[u2] Screenshot of the login page:\n[image: image/png]\n\n[a3] bash({\"command\":\"sleep 100\"})" {
		t.Errorf("recall = %q", text)
	}
	if strings.Contains(text, "Midcompact summary") {
		t.Error("recall re-projected")
	}
	if got := RecallList(st, "LOGIN", 8); !strings.HasPrefix(got, "c0002 | 56 original chars · 1 images\nLogin screenshot.") {
		t.Errorf("pattern list = %q", got)
	}
	if got := RecallList(st, "", 1); strings.Contains(got, "c0002") || !strings.HasPrefix(got, "c0001 | phase one | 153 original chars\n") {
		t.Errorf("limit 1 = %q", got)
	}
	if got := RecallList(st, "nothing-like-this", 8); got != "No compressed blocks matched." {
		t.Errorf("no match = %q", got)
	}
	big := &State{Blocks: []Block{{ID: "c0001", EntryIDs: []string{"u1", "u1", "u1"}}}}
	long := func(id string) (e pisessionEntry, ok bool) { return longEntry(id), true }
	text, _ = RecallRead(big, "c0001", false, long)
	if jsLen(text) != recallBriefCap+jsLen(recallTruncated) || !strings.HasSuffix(text, recallTruncated) {
		t.Errorf("brief cap: %d units", jsLen(text))
	}
	text, _ = RecallRead(big, "c0001", true, long)
	if jsLen(text) != recallFullCap+jsLen(recallTruncated) {
		t.Errorf("full cap: %d units", jsLen(text))
	}
}

type pisessionEntry = pisession.Entry

func longEntry(id string) pisession.Entry {
	return pisession.Entry{ID: id, Type: "message", Raw: []byte(`{"type":"message","id":"` + id + `","message":{"role":"user","content":"` + strings.Repeat("x", 15000) + `"}}`)}
}

func TestKeyCache(t *testing.T) {
	m, k := msgs(t, `{"role":"user","content":"a","timestamp":1}`, `{"role":"user","content":"b","timestamp":2}`)
	var c sessionKeyCache
	for range 2 {
		got, err := c.Keys(m)
		if err != nil || got[0] != k[0] || got[1] != k[1] {
			t.Fatalf("keys = %v %v, want %v", got, err, k)
		}
	}
	c.MaxBytes = 1
	if got, _ := c.Keys(m); got[1] != k[1] || c.bytes != len(m[0].Raw)+len(m[1].Raw) {
		t.Errorf("after overflow: %v, %d bytes", got, c.bytes)
	}
	c.Reset()
	if c.m != nil {
		t.Error("reset")
	}
}
