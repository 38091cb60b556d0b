package midcompact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pisession"
)

// canonical is JSON text with sorted keys, for comparing messages.
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	b, err := jsjson.Reencode(raw, &jsjson.Options{SortKeys: true})
	if err != nil {
		t.Fatalf("reencode %s: %v", raw, err)
	}
	return string(b)
}

func compareMessages(t *testing.T, got []Message, want []json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		var roles []string
		for _, m := range got {
			roles = append(roles, m.Role)
		}
		t.Fatalf("got %d messages %v, want %d", len(got), roles, len(want))
	}
	for i := range got {
		if g, w := canonical(t, got[i].Raw), canonical(t, want[i]); g != w {
			t.Errorf("message %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

// TestBuildSessionContext_Recorded checks the port against Pi 1.6.0's RPC
// get_messages for the recorded get_entries of the same session.
func TestBuildSessionContext_Recorded(t *testing.T) {
	entries := recordedResponses(t, "pi-rpc-observed.jsonl", "get_entries")
	msgs := recordedResponses(t, "pi-rpc-observed.jsonl", "get_messages")
	if len(entries) != 1 || len(msgs) != 1 {
		t.Fatalf("recording has %d get_entries and %d get_messages responses", len(entries), len(msgs))
	}
	var e struct {
		Entries []json.RawMessage
		LeafID  string
	}
	var m struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(entries[0], &e); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(msgs[0], &m); err != nil {
		t.Fatal(err)
	}
	lines := make([]string, len(e.Entries))
	for i, raw := range e.Entries {
		lines[i] = string(raw)
	}
	f := readSession(t, lines...)
	sc, err := BuildSessionContext(branchOf(t, f, e.LeafID))
	if err != nil {
		t.Fatal(err)
	}
	compareMessages(t, sc.Messages, m.Messages)
	if sc.ThinkingLevel != "off" || sc.Model == nil || sc.Model.Provider != "fake" || sc.Model.ModelID != "fake-model" {
		t.Errorf("settings = %q %+v, want off fake/fake-model", sc.ThinkingLevel, sc.Model)
	}
}

// contextCases are session files exercising every branch of Pi's
// conversion: compaction (with kept entries, system messages and an older
// compaction), branch summaries, custom messages, context edits, content
// nullish, settings changes and branching.
var contextCases = map[string][]string{
	"compaction": {
		`{"type":"model_change","id":"m1","parentId":null,"timestamp":"2026-09-08T10:00:00.000Z","provider":"p","modelId":"x"}`,
		`{"type":"message","id":"s1","parentId":"m1","timestamp":"2026-09-08T10:00:01.000Z","message":{"role":"system","content":"","timestamp":1}}`,
		`{"type":"message","id":"u1","parentId":"s1","timestamp":"2026-09-08T10:00:02.000Z","message":{"role":"user","content":"old","timestamp":2}}`,
		`{"type":"compaction","id":"k1","parentId":"u1","timestamp":"2026-09-08T10:00:03.000Z","summary":"first","firstKeptEntryId":"u1","tokensBefore":10}`,
		`{"type":"message","id":"u2","parentId":"k1","timestamp":"2026-09-08T10:00:04.000Z","message":{"role":"user","content":[{"type":"text","text":"kept"}],"timestamp":4}}`,
		`{"type":"message","id":"s2","parentId":"u2","timestamp":"2026-09-08T10:00:04.500Z","message":{"role":"system","timestamp":5}}`,
		`{"type":"thinking_level_change","id":"t1","parentId":"s2","timestamp":"2026-09-08T10:00:05.000Z","thinkingLevel":"high"}`,
		`{"type":"compaction","id":"k2","parentId":"t1","timestamp":"2026-09-08T10:00:06.000Z","summary":"second","firstKeptEntryId":"k1","tokensBefore":20,"systemMessage":{"role":"system","content":"sys","timestamp":6}}`,
		`{"type":"message","id":"a1","parentId":"k2","timestamp":"2026-09-08T10:00:07.000Z","message":{"role":"assistant","content":null,"provider":"q","model":"y","timestamp":7}}`,
	},
	"summaries-custom-edits": {
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-09-08T10:00:00.000Z","message":{"role":"user","content":"hello","timestamp":1}}`,
		`{"type":"branch_summary","id":"b1","parentId":"u1","timestamp":"2026-09-08T10:00:01.123Z","fromId":"zz","summary":"branch went nowhere"}`,
		`{"type":"branch_summary","id":"b2","parentId":"b1","timestamp":"2026-09-08T10:00:01.500Z","fromId":"zz","summary":""}`,
		`{"type":"custom_message","id":"c1","parentId":"b2","timestamp":"2026-09-08T10:00:02.000Z","customType":"note","content":"visible","display":true,"details":{"x":1}}`,
		`{"type":"custom_message","id":"c2","parentId":"c1","timestamp":"2026-09-08","customType":"note2","display":false}`,
		`{"type":"custom","id":"x1","parentId":"c2","timestamp":"2026-09-08T10:00:03.000Z","customType":"state","data":{"a":1}}`,
		`{"type":"message","id":"a1","parentId":"x1","timestamp":"2026-09-08T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"long answer"}],"timestamp":4}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-09-08T10:00:05.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"out"}],"timestamp":5}}`,
		`{"type":"context_edit","id":"e1","parentId":"r1","timestamp":"2026-09-08T10:00:06.000Z","targetId":"a1","replacement":{"content":"short"}}`,
		`{"type":"context_edit","id":"e2","parentId":"e1","timestamp":"2026-09-08T10:00:07.000Z","targetId":"r1","replacement":null}`,
		`{"type":"context_edit","id":"e3","parentId":"e2","timestamp":"2026-09-08T10:00:08.000Z","targetId":"c1","replacement":{"content":[{"type":"text","text":"edited"}]}}`,
		`{"type":"context_edit","id":"e4","parentId":"e3","timestamp":"2026-09-08T10:00:09.000Z","targetId":"u1","replacement":{"content":"first edit"}}`,
		`{"type":"context_edit","id":"e5","parentId":"e4","timestamp":"2026-09-08T10:00:10.000Z","targetId":"u1","replacement":{"content":"last edit"}}`,
		`{"type":"label","id":"l1","parentId":"e5","timestamp":"2026-09-08T10:00:11.000Z","targetId":"u1","label":"start"}`,
		`{"type":"message","id":"x2","parentId":"l1","timestamp":"2026-09-08T10:00:12.000Z","message":{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"timestamp":12}}`,
	},
	"branched": {
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-09-08T10:00:00.000Z","message":{"role":"user","content":"root","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-09-08T10:00:01.000Z","message":{"role":"assistant","content":[],"timestamp":2}}`,
		`{"type":"message","id":"a2","parentId":"u1","timestamp":"2026-09-08T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"other"}],"timestamp":3}}`,
		`{"type":"custom_message","id":"c1","parentId":"a1","timestamp":"not a date","customType":"t","content":[{"type":"text","text":"x"}],"display":true}`,
	},
}

// TestBuildSessionContext_RealNode compares the port with Pi 1.6.0's own
// buildSessionContext (run in the test Node) leaf by leaf.
func TestBuildSessionContext_RealNode(t *testing.T) {
	o := newOracle(t)
	for name, lines := range contextCases {
		t.Run(name, func(t *testing.T) {
			eachLeaf(t, o, lines, func(leaf string, got []Message, want []json.RawMessage) {
				t.Run(leaf, func(t *testing.T) { compareMessages(t, got, want) })
			})
		})
	}
}

// eachLeaf builds the session context of lines at every entry, with the
// port and with Pi (the oracle), and hands both to check.
func eachLeaf(t *testing.T, o *oracle, lines []string, check func(leaf string, got []Message, want []json.RawMessage)) {
	t.Helper()
	f := readSession(t, lines...)
	var raws []json.RawMessage
	for _, l := range lines {
		raws = append(raws, json.RawMessage(l))
	}
	for _, e := range f.Entries {
		var want struct{ Messages []json.RawMessage }
		o.ask(t, map[string]any{"op": "context", "entries": raws, "leaf": e.ID}, &want)
		sc, err := BuildSessionContext(branchOf(t, f, e.ID))
		if err != nil {
			t.Fatal(err)
		}
		check(e.ID, sc.Messages, want.Messages)
	}
}

func TestBuildSessionContext_Settings(t *testing.T) {
	f := readSession(t, contextCases["compaction"]...)
	sc, err := BuildSessionContext(branchOf(t, f, ""))
	if err != nil {
		t.Fatal(err)
	}
	if sc.ThinkingLevel != "high" || sc.Model == nil || *sc.Model != (ModelRef{"q", "y"}) {
		t.Errorf("settings = %q %+v, want high q/y", sc.ThinkingLevel, sc.Model)
	}
	var roles []string
	for _, m := range sc.Messages {
		roles = append(roles, m.Role)
	}
	if got, want := strings.Join(roles, ","), "system,compactionSummary,user,assistant"; got != want {
		t.Errorf("roles = %s, want %s", got, want)
	}
}

func TestJSDateMs(t *testing.T) {
	for in, want := range map[string]float64{
		`"2026-11-29T19:26:18.087Z"`:  1795980378087,
		`"2026-11-29T19:26:18.0875Z"`: 1795980378087,
		`"2026-11-29"`:                1795910400000,
		`"2026-11-29T19:26Z"`:         1795980360000,
		`"2026-11-29t19:26:18z"`:      1795980378000,
		`"+002026-11-29T00:00:00Z"`:   1795910400000,
		`"2026-11-29T24:00:00Z"`:      1795996800000,
		`"2026-02-30T00:00:00Z"`:      1772409600000,
		`"2026"`:                      1767225600000,
		`"2026-11-29T19:26:18+01:00"`: 1795976778000,
		`"2026-11-29T19:26:18+0100"`:  1795976778000,
		`"2026-11-29 19:26:18Z"`:      1795980378000,
		`1.5`:                         1,
		`true`:                        1,
		`null`:                        0,
	} {
		if got := jsDateMs(json.RawMessage(in)); got != want {
			t.Errorf("jsDateMs(%s) = %v, want %v", in, got, want)
		}
	}
	for _, in := range []string{`"2026-11-29T24:00:01Z"`, `"-000000-01-01T00:00:00Z"`, `"2026-11-29T19:26:18.Z"`, `" 2026-11-29T19:26:18Z"`, `"abc"`, `""`, `8.64e15001`, `{}`, ``} {
		if got := jsDateMs(json.RawMessage(in)); got == got {
			t.Errorf("jsDateMs(%s) = %v, want NaN", in, got)
		}
	}
}

var _ = pisession.Entry{}

// TestBuildSessionContext_RealNodeBytes checks the messages the port builds
// byte for byte against JSON.stringify of Pi's: strings holding '<', '>',
// '&', U+2028 and U+2029 stay raw, as JSON.stringify writes them (not
// \u003c as encoding/json would). The session's values are already in
// JSON.stringify form, so every byte of the port's output is comparable;
// member names the port copies (a context edit's spread, content nullish)
// hold them too.
func TestBuildSessionContext_RealNodeBytes(t *testing.T) {
	o := newOracle(t)
	lines := []string{
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-09-08T10:00:00.000Z","message":{"role":"user","content":"a<b>&c` + "\u2028" + `","timestamp":1}}`,
		`{"type":"branch_summary","id":"b1","parentId":"u1","timestamp":"2026-09-08T10:00:01.123Z","fromId":"<zz>","summary":"went <nowhere> & back` + "\u2029" + `"}`,
		`{"type":"custom_message","id":"c1","parentId":"b1","timestamp":"2026-09-08T10:00:02.000Z","customType":"<note>","content":"a&b","display":true,"details":{"<x>":"&"}}`,
		`{"type":"message","id":"a1","parentId":"c1","timestamp":"2026-09-08T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"long"}],"<k&>":"` + "\u2028" + `","timestamp":4}}`,
		`{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-09-08T10:00:05.000Z","message":{"role":"user","content":null,"a>b":1,"timestamp":5}}`,
		`{"type":"context_edit","id":"e1","parentId":"u2","timestamp":"2026-09-08T10:00:06.000Z","targetId":"a1","replacement":{"content":"<short> & sweet"}}`,
		`{"type":"compaction","id":"k1","parentId":"e1","timestamp":"2026-09-08T10:00:07.000Z","summary":"<sum> & more","firstKeptEntryId":"u1","tokensBefore":10}`,
	}
	eachLeaf(t, o, lines, func(leaf string, got []Message, want []json.RawMessage) {
		if len(got) != len(want) {
			t.Fatalf("leaf %s: %d messages, Pi %d", leaf, len(got), len(want))
		}
		for i, m := range got {
			if string(m.Raw) != string(want[i]) {
				t.Errorf("leaf %s message %d:\n got %s\nwant %s", leaf, i, m.Raw, want[i])
			}
		}
	})
}
