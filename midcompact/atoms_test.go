package midcompact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact/internal/sessiontest"
)

// fixture reads testdata/sessions/<name>.jsonl.
func fixture(t testing.TB, name string) *pisession.File {
	t.Helper()
	return sessiontest.Fixture(t, name)
}

func snapshotOf(t testing.TB, f *pisession.File, leaf string) *Snapshot {
	t.Helper()
	s, err := NewSnapshot(branchOf(t, f, leaf), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type atomRow struct {
	Ref, Kind, Protocol string
	Compressible        bool
	ProtocolClosed      bool
	Protected           bool
	EntryIDs            string
}

func rows(s *Snapshot) []atomRow {
	var out []atomRow
	for i := range s.Atoms {
		a := &s.Atoms[i]
		out = append(out, atomRow{a.Ref, string(a.Kind), string(a.ToolProtocol), a.Compressible, a.ProtocolClosed, a.Protected(), strings.Join(a.EntryIDs, ",")})
	}
	return out
}

// TestBuildAtoms_Kinds pins the classification of seed 001 §Atoms and
// ranges: closed tool_exchange (call + adjacent results, one atom),
// abandoned exchange (compressible as a whole), ambiguous protocol and
// orphan results protected, unsupported kinds (custom, other) protected,
// and a message without its persistent entry (context-edited) protected.
func TestBuildAtoms_Kinds(t *testing.T) {
	s := snapshotOf(t, fixture(t, "kinds"), "")
	want := []atomRow{
		{"a0001", "user", "", true, true, false, "u1"},
		{"a0002", "tool_exchange", "closed", true, true, false, "a1,r1,r2"},
		{"a0003", "assistant", "", true, true, false, "a2"},
		{"a0004", "user", "", true, true, false, "u2"},
		{"a0005", "tool_exchange", "abandoned", true, false, false, "a3"},
		{"a0006", "user", "", true, true, false, "u3"},
		{"a0007", "tool_exchange", "ambiguous", false, false, true, "a4"},
		{"a0008", "assistant", "", true, true, false, "a5"},
		{"a0009", "orphan_tool_result", "orphan", false, false, true, "r4"},
		{"a0010", "orphan_tool_result", "orphan", false, false, true, "r9"},
		{"a0011", "bash", "", true, true, false, "x1"},
		{"a0012", "custom", "", false, true, true, ""},
		{"a0013", "user", "", false, true, true, ""},
		{"a0014", "tool_exchange", "ambiguous", false, false, true, "a6,r6"},
		{"a0015", "other", "", false, true, true, ""},
		{"a0016", "assistant", "", true, true, false, "a7"},
	}
	if diff := cmp.Diff(want, rows(s)); diff != "" {
		t.Errorf("atoms (-want +got):\n%s", diff)
	}
	if s.MessageCount != 19 {
		t.Errorf("MessageCount = %d, want 19", s.MessageCount)
	}
	a2 := s.Atom("a0002")
	if got := strings.Join(a2.ToolNames, ","); got != "read,bash" {
		t.Errorf("a0002 tools = %s", got)
	}
	if got := strings.Join(a2.Roles, ","); got != "assistant,toolResult" {
		t.Errorf("a0002 roles = %s", got)
	}
	img := s.Atom("a0004").Metrics
	if img.ImageCount() != 1 || img.Images[0].Width != 3 || img.Images[0].Height != 2 || img.Images[0].MimeType != "image/png" || img.ImagePayloadBytes() == 0 {
		t.Errorf("a0004 image = %+v", img.Images)
	}
	if got := s.Atom("a0004").Metrics.ContentChars; got != len("Screenshot of the login page:") {
		t.Errorf("a0004 chars = %d (images are never chars)", got)
	}
	if s.Atom("g0001") != nil {
		t.Error("a group ref resolved as an atom")
	}
}

func TestBuildAtoms_SharedCallIDAcrossMessages(t *testing.T) {
	f := readSession(t,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{}}],"timestamp":1}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"x","content":[],"timestamp":2}}`,
		`{"type":"message","id":"a2","parentId":"r1","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{}}],"timestamp":3}}`,
		`{"type":"message","id":"a3","parentId":"a2","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"d","name":"x","arguments":{}}],"timestamp":4}}`,
		`{"type":"message","id":"r3","parentId":"a3","timestamp":"t","message":{"role":"toolResult","toolCallId":"d","toolName":"x","content":[],"timestamp":5}}`,
		`{"type":"message","id":"r4","parentId":"r3","timestamp":"t","message":{"role":"toolResult","toolCallId":"d","toolName":"x","content":[],"timestamp":6}}`,
	)
	got := rows(snapshotOf(t, f, ""))
	want := []atomRow{
		{"a0001", "tool_exchange", "ambiguous", false, false, true, "a1,r1"},
		{"a0002", "tool_exchange", "ambiguous", false, false, true, "a2"},
		{"a0003", "tool_exchange", "ambiguous", false, false, true, "a3,r3"},
		{"a0004", "orphan_tool_result", "orphan", false, false, true, "r4"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("atoms (-want +got):\n%s", diff)
	}
}

// TestMapEntryIDs_Queue: identical messages map to their entries in order.
func TestMapEntryIDs_Queue(t *testing.T) {
	u := `"message":{"role":"user","content":"same","timestamp":1}}`
	f := readSession(t,
		`{"type":"message","id":"x1","parentId":null,"timestamp":"t",`+u,
		`{"type":"message","id":"x2","parentId":"x1","timestamp":"t",`+u,
	)
	s := snapshotOf(t, f, "")
	if s.Atoms[0].EntryIDs[0] != "x1" || s.Atoms[1].EntryIDs[0] != "x2" {
		t.Errorf("entry ids = %v %v", s.Atoms[0].EntryIDs, s.Atoms[1].EntryIDs)
	}
}

func TestMetrics(t *testing.T) {
	m, _ := ParseMessage([]byte(`{"role":"assistant","content":[{"type":"text","text":"a😀b"},{"type":"thinking","thinking":"中文"},{"type":"toolCall","id":"i","name":"bash","arguments":{"c":"x"}},{"type":"image","data":"!!","mimeType":"image/gif"}]}`))
	got := messageMetrics(&m)
	if got.ContentChars != 3+2+4+len(`{"c":"x"}`) || got.ImageCount() != 1 || got.Images[0].PayloadBytes != 0 {
		t.Errorf("metrics = %+v", got)
	}
	bash, _ := ParseMessage([]byte(`{"role":"bashExecution","command":"ls","output":"abc"}`))
	custom, _ := ParseMessage([]byte(`{"role":"custom","content":"xy","summary":"abcd"}`))
	if a, b := messageMetrics(&bash).ContentChars, messageMetrics(&custom).ContentChars; a != 5 || b != 6 {
		t.Errorf("bash %d custom %d, want 5 6", a, b)
	}
	n, w := charClasses("abc 中文\nplain")
	if n != 10 || w != 2 {
		t.Errorf("charClasses = %d/%d, want 10/2", n, w)
	}
	gif := []byte("GIF89a\x01\x00\x01\x00")
	if w, h := imageSize(gif); w != 1 || h != 1 {
		t.Errorf("gif size %dx%d", w, h)
	}
}

func TestTruncateMiddle(t *testing.T) {
	long := strings.Repeat("x", 1000)
	got := truncateMiddle(long, 100)
	if jsLen(got) > 100 || !strings.Contains(got, " chars omitted] … ") {
		t.Errorf("truncateMiddle = %q (%d units)", got, jsLen(got))
	}
	if got := truncateMiddle("  a \n\t b  ", 100); got != "a b" {
		t.Errorf("normalize = %q", got)
	}
	if got := truncateMiddle("abcdefghij", 5); got != "abcd…" {
		t.Errorf("short limit = %q", got)
	}
	ex := excerptAround(strings.Repeat("a", 500)+"NEEDLE"+strings.Repeat("b", 500), "needle", 100)
	if !strings.Contains(ex, "NEEDLE") || !strings.HasPrefix(ex, "… ") || !strings.HasSuffix(ex, " …") || jsLen(ex) > 100 {
		t.Errorf("excerpt = %q", ex)
	}
}
