package midcompact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// memSession is an in-memory Pi session tree that appends entries at its
// leaf as Pi's appendEntry does, for driving the pure transaction logic
// the piext layer wires to Pi.
type memSession struct {
	t     testing.TB
	lines []string
	leaf  string
	n     int
}

func newMemSession(t testing.TB, f *pisession.File) *memSession {
	s := &memSession{t: t}
	for _, e := range f.Entries {
		s.lines = append(s.lines, string(e.Raw))
		s.leaf = e.ID
	}
	return s
}

func (s *memSession) file() *pisession.File { return readSession(s.t, s.lines...) }

func (s *memSession) branch() []pisession.Entry { return branchOf(s.t, s.file(), s.leaf) }

// appendCustom writes a custom entry the way Pi serialises one.
func (s *memSession) appendCustom(customType string, data any) string {
	s.t.Helper()
	s.n++
	id := fmt.Sprintf("mcx%d", s.n)
	b, err := json.Marshal(data)
	if err != nil {
		s.t.Fatal(err)
	}
	parent, _ := json.Marshal(s.leaf)
	s.lines = append(s.lines, fmt.Sprintf(`{"type":"custom","customType":%q,"data":%s,"id":%q,"parentId":%s,"timestamp":"2026-09-08T11:00:%02d.000Z"}`, customType, b, id, parent, s.n))
	s.leaf = id
	return id
}

func (s *memSession) appendMessage(raw string) string {
	s.n++
	id := fmt.Sprintf("mcm%d", s.n)
	parent, _ := json.Marshal(s.leaf)
	s.lines = append(s.lines, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-09-08T11:00:%02d.000Z","message":%s}`, id, parent, s.n, raw))
	s.leaf = id
	return id
}

// env is the tool environment at the current leaf.
func (s *memSession) env(lock *PlanningLock, memory Restored) *ToolEnv {
	f := s.file()
	return &ToolEnv{
		Branch: branchOf(s.t, f, s.leaf),
		Lookup: f.Entry,
		AnchorBranch: func(id string) ([]pisession.Entry, error) {
			return f.Branch(id)
		},
		Memory: memory,
		Lock:   lock,
		NowMs:  1,
	}
}

// call runs the tool with a request JSON and appends a mutated draft.
func (s *memSession) call(lock *PlanningLock, request string) ToolResult {
	s.t.Helper()
	res := Execute([]byte(`{"request":`+request+`}`), s.env(lock, Restored{}))
	if res.Draft != nil {
		s.appendCustom(DraftEntryType, res.Draft)
	}
	return res
}

func mustContain(t testing.TB, text string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(text, sub) {
			t.Errorf("text lacks %q:\n%s", sub, text)
		}
	}
}
