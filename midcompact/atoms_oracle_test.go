package midcompact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// atoms asks the Node oracle (testdata/node/atoms.mjs, over Pi 1.6.0's
// buildSessionContext) for the atoms of the branch ending at leaf.
func (o *oracle) atoms(t *testing.T, entries []json.RawMessage, leaf string) []AtomInfo {
	t.Helper()
	var r struct{ Atoms []AtomInfo }
	o.ask(t, map[string]any{"op": "atoms", "entries": entries, "leaf": leaf, "now": 0}, &r)
	for i := range r.Atoms { // JSON [] and Go's nonNil agree; keep the comparison strict
		if r.Atoms[i].EntryIDs == nil {
			r.Atoms[i].EntryIDs = []string{}
		}
	}
	if r.Atoms == nil {
		r.Atoms = []AtomInfo{}
	}
	return r.Atoms
}

// sessionLines splits a session file into its entry lines (the header
// dropped) and their ids.
func sessionLines(t *testing.T, text []byte) (entries []json.RawMessage, ids []string) {
	t.Helper()
	for _, line := range bytes.Split(bytes.TrimSpace(text), []byte("\n")) {
		var e struct{ Type, ID string }
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "session" {
			continue
		}
		entries = append(entries, json.RawMessage(line))
		ids = append(ids, e.ID)
	}
	return entries, ids
}

// checkAtomsAgainstNode compares FileAtoms with the oracle for the branch
// ending at each of leaves (nil: every entry) of the session file text,
// and returns the atom kinds and tool protocols seen.
func checkAtomsAgainstNode(t *testing.T, o *oracle, name string, text []byte, leaves []string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	entries, ids := sessionLines(t, text)
	if leaves == nil {
		leaves = ids
	}
	for _, leaf := range leaves {
		got, err := FileAtoms(bytes.NewReader(text), leaf)
		if err != nil {
			t.Fatalf("%s at %s: %v", name, leaf, err)
		}
		if got == nil {
			got = []AtomInfo{}
		}
		if diff := cmp.Diff(o.atoms(t, entries, leaf), got); diff != "" {
			t.Errorf("%s at %s: atoms differ from Node's (-node +go):\n%s", name, leaf, diff)
		}
		for _, a := range got {
			seen[string(a.Kind)], seen[string(a.ToolProtocol)] = true, true
			if a.ImagePayloadBytes > 0 {
				seen["image bytes"] = true
			}
			if a.ImageCount > 0 && a.ImagePayloadBytes == 0 {
				seen["broken image"] = true
			}
		}
	}
	return seen
}

// TestFileAtoms_NodeOracle: the atoms and their sizes (kinds, protection,
// tool protocol, entry mapping, message keys, content chars in code points,
// image counts and payload bytes) agree with an independent oracle: Pi
// 1.6.0's own buildSessionContext run in Node, with the reference's atom
// rules written in JavaScript (testdata/node/atoms.mjs), for the branch at
// every entry of every session fixture; and the CLI goldens are exactly
// what Node computes.
func TestFileAtoms_NodeOracle(t *testing.T) {
	o := newOracle(t)
	files, err := filepath.Glob(filepath.Join("testdata", "sessions", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session fixtures: %v", err)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkAtomsAgainstNode(t, o, filepath.Base(f), text, nil)
	}
	for _, c := range []struct{ session, leaf, golden string }{
		{"kinds", "", "kinds.atoms.json"},
		{"kinds", "a2", "kinds-a2.atoms.json"},
		{"committed", "", "committed.atoms.json"},
	} {
		text, err := os.ReadFile(filepath.Join("testdata", "sessions", c.session+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		entries, ids := sessionLines(t, text)
		leaf := c.leaf
		if leaf == "" {
			leaf = ids[len(ids)-1]
		}
		want, err := json.MarshalIndent(o.atoms(t, entries, leaf), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden, err := os.ReadFile(filepath.Join("testdata", "cli", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(append(want, '\n'), golden) {
			t.Errorf("testdata/cli/%s is not what Node computes:\n%s", c.golden, want)
		}
	}
}

// TestFileAtoms_NodeOracleRandom: the same comparison on random sessions
// built to reach every rule: multi-call exchanges, results apart from their
// calls, duplicate and missing results, orphans, bash, custom messages,
// images (valid, unpadded and broken base64), wide and astral text, branch
// switches, Pi compactions, and committed midcompact states over runs of
// the branch's real messages (projection, compressed atoms).
func TestFileAtoms_NodeOracleRandom(t *testing.T) {
	o := newOracle(t)
	r := rand.New(rand.NewPCG(21, 17))
	seen := map[string]bool{}
	for n := range 200 {
		text := randomSession(t, r)
		_, ids := sessionLines(t, text)
		leaves := []string{ids[len(ids)-1], ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]}
		for k := range checkAtomsAgainstNode(t, o, fmt.Sprintf("random session %d", n), text, leaves) {
			seen[k] = true
		}
		if t.Failed() {
			t.Logf("session:\n%s", text)
			return
		}
	}
	for _, k := range []string{"user", "assistant", "tool_exchange", "orphan_tool_result", "bash", "custom", "other", "compressed",
		"closed", "abandoned", "ambiguous", "orphan", "image bytes", "broken image"} {
		if !seen[k] {
			t.Errorf("the random sessions never produced %q", k)
		}
	}
}

// randomSession writes a Pi v3 session file of 8–40 random entries.
func randomSession(t *testing.T, r *rand.Rand) []byte {
	t.Helper()
	var lines []string
	var ids []string
	parent := ""
	ts := 1000.0
	var calls []string // tool call ids issued so far
	add := func(e map[string]any) string {
		id := fmt.Sprintf("e%d", len(ids)+1)
		e["id"] = id
		if parent == "" {
			e["parentId"] = nil
		} else {
			e["parentId"] = parent
		}
		e["timestamp"] = "2026-09-08T10:00:00.000Z"
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		ids = append(ids, id)
		parent = id
		return id
	}
	message := func(m map[string]any) {
		ts++
		m["timestamp"] = ts
		add(map[string]any{"type": "message", "message": m})
	}
	texts := []string{"plain words", "中文 and 😀 astral", "tab\tand\nnewline", "", "<b>&amp;</b>", "é\u2028x"}
	text := func() string { return texts[r.IntN(len(texts))] + fmt.Sprint(r.IntN(100)) }
	image := func() map[string]any {
		payload := make([]byte, r.IntN(40))
		for i := range payload {
			payload[i] = byte(r.IntN(256))
		}
		data := base64.StdEncoding.EncodeToString(payload)
		switch r.IntN(4) {
		case 0:
			data = base64.RawStdEncoding.EncodeToString(payload)
		case 1:
			data = "!!" + data // does not decode
		}
		return map[string]any{"type": "image", "data": data, "mimeType": []string{"image/png", "image/jpeg"}[r.IntN(2)]}
	}
	result := func(id string) {
		message(map[string]any{"role": "toolResult", "toolCallId": id, "toolName": "bash",
			"content": []any{map[string]any{"type": "text", "text": text()}}, "isError": r.IntN(5) == 0})
	}
	for range 8 + r.IntN(32) {
		switch k := r.IntN(20); {
		case k < 5:
			content := []any{map[string]any{"type": "text", "text": text()}}
			if r.IntN(4) == 0 {
				content = append(content, image())
			}
			if r.IntN(3) == 0 {
				message(map[string]any{"role": "user", "content": text()})
			} else {
				message(map[string]any{"role": "user", "content": content})
			}
		case k < 8:
			message(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text()},
				map[string]any{"type": "thinking", "thinking": text()}}, "usage": map[string]any{"cost": map[string]any{"total": r.Float64()}}})
		case k < 13: // an exchange: one to three calls, then some of their results
			var parts []any
			var mine []string
			for range 1 + r.IntN(3) {
				id := fmt.Sprintf("call%d", len(calls)+1)
				if len(calls) > 0 && r.IntN(8) == 0 {
					id = calls[r.IntN(len(calls))] // a reused id
				}
				calls = append(calls, id)
				mine = append(mine, id)
				parts = append(parts, map[string]any{"type": "toolCall", "id": id, "name": []string{"bash", "read"}[r.IntN(2)],
					"arguments": map[string]any{"command": text(), "n": r.IntN(10)}})
			}
			message(map[string]any{"role": "assistant", "content": parts})
			for _, id := range mine {
				if r.IntN(6) > 0 {
					result(id)
				}
				if r.IntN(10) == 0 {
					result(id) // a duplicate result
				}
			}
		case k == 13 && len(calls) > 0: // a result apart from its call
			result(calls[r.IntN(len(calls))])
		case k == 14:
			message(map[string]any{"role": "bashExecution", "command": text(), "output": text(), "exitCode": 0, "cancelled": false, "truncated": false})
		case k == 15:
			add(map[string]any{"type": "custom_message", "customType": "note", "content": text(), "display": true})
		case k == 16 && len(ids) > 3: // a branch switch: continue from an earlier entry
			parent = ids[r.IntN(len(ids))]
		case k == 17 && len(ids) > 4 && r.IntN(3) == 0: // a Pi compaction keeping a recent entry
			add(map[string]any{"type": "compaction", "summary": "compacted " + text(), "firstKeptEntryId": ids[len(ids)-1-r.IntN(3)], "tokensBefore": 100})
		default: // a committed state over a run of the branch's messages
			addState(t, r, &lines, ids, parent, add)
		}
	}
	return []byte(testHeader + "\n" + strings.Join(lines, "\n") + "\n")
}

// addState appends a midcompact-state whose blocks are runs of the current
// branch's visible messages (keys from our own MessageKey: a wrong key shows
// as a projection that Node does not make).
func addState(t *testing.T, r *rand.Rand, lines *[]string, ids []string, parent string, add func(map[string]any) string) {
	if parent == "" {
		return
	}
	f := readSession(t, *lines...)
	branch, err := f.Branch(parent)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := BuildSessionContext(branch)
	if err != nil || len(sc.Messages) == 0 {
		return
	}
	byKey := map[string][]string{} // message entries by key, in branch order
	for _, e := range branch {
		if e.Type != "message" {
			continue
		}
		var me struct{ Message json.RawMessage }
		if json.Unmarshal(e.Raw, &me) != nil {
			continue
		}
		if m, err := ParseMessage(me.Message); err == nil {
			if k, err := MessageKey(&m); err == nil {
				byKey[k] = append(byKey[k], e.ID)
			}
		}
	}
	var blocks []any
	for b := range 1 + r.IntN(2) {
		from := r.IntN(len(sc.Messages))
		to := min(len(sc.Messages), from+1+r.IntN(3))
		keys, entryIDs := []string{}, []string{}
		for i := from; i < to; i++ {
			k, err := MessageKey(&sc.Messages[i])
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
			if ids := byKey[k]; len(ids) > 0 {
				entryIDs = append(entryIDs, ids[0])
			}
		}
		blocks = append(blocks, map[string]any{"id": fmt.Sprintf("c%04d", b+1), "topic": []string{"", "topic 中"}[r.IntN(2)],
			"summary": "summary " + fmt.Sprint(r.IntN(9)), "entryIds": entryIDs, "messageKeys": keys, "createdAt": "x",
			"originalApproxTokens": r.IntN(50)})
	}
	add(map[string]any{"type": "custom", "customType": StateEntryType, "data": map[string]any{"version": 1, "createdAt": "x", "blocks": blocks}})
}
