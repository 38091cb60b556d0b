package live

import "github.com/go-json-experiment/json/jsontext"

// WakeUnit is a unit inside a wake envelope: the board unit without its
// released flag and releasing checkpoint id (reference §4.7).
type WakeUnit struct {
	ID             string                    `json:"id"`
	Status         string                    `json:"status"`
	WithdrawReason jsontext.Value            `json:"withdraw_reason,omitzero"`
	Note           string                    `json:"note,omitempty"`
	Guess          string                    `json:"guess,omitempty"`
	Question       string                    `json:"question,omitempty"`
	Fields         map[string]jsontext.Value `json:",unknown"`
}

// WakeAnnotation is an annotation inside a wake envelope.
type WakeAnnotation struct {
	ID     string                    `json:"id"`
	Fields map[string]jsontext.Value `json:",unknown"`
}

// Answer is the riffer's reply to an agent question, as a wake envelope
// carries it.
type Answer struct {
	UnitID string `json:"unit_id"`
	Text   string `json:"text"`
}

// WakeEnvelope is what `wait` prints and GET /wait serves (seed 002).
// LostAfterCheckpointID is present only on page-lost batches (string or null).
type WakeEnvelope struct {
	SchemaVersion         string           `json:"schema_version"`
	CheckpointID          string           `json:"checkpoint_id"`
	Kind                  string           `json:"kind"`
	ModeAtCheckpoint      string           `json:"mode_at_checkpoint"`
	SessionStatus         string           `json:"session_status"`
	Units                 []WakeUnit       `json:"units"`
	Annotations           []WakeAnnotation `json:"annotations"`
	Answers               []Answer         `json:"answers"`
	LostAfterCheckpointID jsontext.Value   `json:"lost_after_checkpoint_id,omitzero"`
}
