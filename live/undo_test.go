package live

import (
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"
	"pgregory.net/rapid"
)

// genEnvelope draws one valid envelope of a small world (three units, three
// annotations, three checkpoint ids), so that envelopes touch each other's
// units: refinements, withdrawals, releases in every mode, answers.
func genEnvelope(t *rapid.T, seq int64) *envelope {
	unit := fmt.Sprintf("u%d", rapid.IntRange(0, 2).Draw(t, "unit"))
	var typ, p string
	switch rapid.IntRange(0, 10).Draw(t, "type") {
	case 0, 1:
		typ, p = "unit", unitPayload(unit)
	case 2:
		typ, p = "unit_update", fmt.Sprintf(`{"unit_id":%q,"statement":"s%d","anchors_add":[],"confirmed":{"element":true,"change":false}}`, unit, seq)
	case 3, 10:
		typ, p = "unit_withdraw", fmt.Sprintf(`{"unit_id":%q,"reason":"r"}`, unit)
	case 4:
		typ, p = "annotation", annotationPayload(fmt.Sprintf("a%d", rapid.IntRange(0, 2).Draw(t, "ann")))
	case 5, 6:
		typ, p = "checkpoint", checkpointPayload(fmt.Sprintf("c%d", rapid.IntRange(0, 2).Draw(t, "cp")),
			rapid.SampledFrom([]string{"silence", "page_change", "send", "final"}).Draw(t, "trigger"),
			rapid.SampledFrom([]string{ModeInstant, ModeSmart, ModeCollect}).Draw(t, "cpmode"))
	case 7:
		typ, p = "answer", fmt.Sprintf(`{"unit_id":%q,"text":"t%d"}`, unit, seq)
	case 8:
		typ, p = "mode", fmt.Sprintf(`{"mode":%q}`, rapid.SampledFrom([]string{ModeInstant, ModeSmart, ModeCollect}).Draw(t, "mode"))
	default:
		typ, p = "mic", `{"state":"muted"}`
	}
	return &envelope{SchemaVersion: schemaVersion, SessionID: "s1", Seq: seq, T: float64(seq), Type: typ, Payload: []byte(p)}
}

func boardJSON(t *rapid.T, b *board) string {
	data, err := json.Marshal(b, jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestBoard_RollbackRestores: a transaction rolled back leaves the board
// exactly as it was (byte for byte as board.json), and the board then
// takes the same transaction again to the same state as a copy that never
// saw it, so the rollback shares no slice or map entry with the discarded
// changes.
func TestBoard_RollbackRestores(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := newBoard()
		sid := "s1"
		b.SessionID = &sid
		seq := int64(0)
		apply := func(b *board, envs []*envelope) {
			for _, env := range envs {
				b.apply(env, &effects{})
				b.AckedSeq = env.Seq
			}
		}
		var prefix, txn []*envelope
		for range rapid.IntRange(0, 16).Draw(t, "prefix") {
			seq++
			prefix = append(prefix, genEnvelope(t, seq))
		}
		for range rapid.IntRange(1, 8).Draw(t, "txn") {
			seq++
			txn = append(txn, genEnvelope(t, seq))
		}
		apply(b, prefix)
		before := boardJSON(t, b)
		twin := b.clone()

		b.begin()
		apply(b, txn)
		b.rollback()
		if got := boardJSON(t, b); got != before {
			t.Fatalf("after rollback:\n%s\nwant:\n%s", got, before)
		}
		b.begin()
		apply(b, txn)
		b.commit()
		apply(twin, txn)
		if got, want := boardJSON(t, b), boardJSON(t, twin); got != want {
			t.Fatalf("transaction again after rollback:\n%s\nwant:\n%s", got, want)
		}
	})
}
