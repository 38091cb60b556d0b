package broker

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// ProtocolVersion is the broker protocol this package speaks.
const ProtocolVersion = 1

// MaxRecordBytes caps one protocol line, in bytes without LF and CR.
const MaxRecordBytes = 1_000_000

// Endpoint is endpoint.json: exactly these keys.
type Endpoint struct {
	Protocol int    `json:"protocol"`
	Identity string `json:"identity"`
	Token    string `json:"token"`  // 48 lowercase hex characters (24 random bytes)
	Socket   string `json:"socket"` // absolute socket path
	PID      int    `json:"pid"`
}

// Handshake is the first line from the client, echoed by the broker.
type Handshake struct {
	Type     string `json:"type"` // "handshake"
	Protocol int    `json:"protocol"`
	Identity string `json:"identity"`
	Token    string `json:"token"`
}

// HandshakeError is the broker's refusal of a handshake.
type HandshakeError struct {
	Type string `json:"type"` // "error"
	Code string `json:"code"` // "incompatible"
}

// Request types.
const (
	TypeState  = "state"
	TypeSubmit = "submit"
	TypeCancel = "cancel"
	TypeReset  = "reset"
	// TypeWatch turns the connection into a stream: the broker answers
	// with the current snapshot, then sends one more response with the same
	// id after every change (only the newest, in sequence order), until
	// either side closes. No further requests are read on it.
	TypeWatch = "watch"
)

// Request is one command. Task is set for submit, TaskID for cancel.
type Request struct {
	Type   string       `json:"type"`
	ID     string       `json:"id"` // 24 lowercase hex characters
	Task   *TaskPayload `json:"task,omitempty"`
	TaskID string       `json:"task_id,omitempty"`
	// Key is the mutation's Idempotency-Key (at most
	// runtime.MaxIdempotencyKey bytes): the broker acts once per key
	// (runtime.Runtime.Once).
	Key string `json:"key,omitempty"`
}

// TaskPayload is a task the handler already validated and normalized
// with the contract package: the instruction shown in the snapshot and
// the exact envelope for Pi. The broker checks their bounds again.
type TaskPayload struct {
	Prompt  string `json:"prompt"`
	Message string `json:"message"`
}

// Response answers one request. OK is true for accepted (and cancelled)
// results and for state. Snapshot is the complete canonical snapshot
// when one exists; Message is a fixed text for invalid requests.
type Response struct {
	ID       *string         `json:"id"`
	OK       bool            `json:"ok"`
	Result   runtime.Result  `json:"result,omitempty"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	// Seq numbers the snapshot within this broker's lifetime: a larger Seq
	// is a newer snapshot (see runtime.Frame).
	Seq     uint64 `json:"seq,omitempty"`
	Message string `json:"message,omitempty"`
}

// Fixed messages of invalid requests.
const (
	msgMalformed = "malformed broker command"
	msgUnknown   = "unknown broker command"
)

func newToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// readRecord reads the next record of a connection, framed by
// internal/jsonl with the MaxRecordBytes cap. An oversized or unterminated
// record, or a read error, ends the connection (the error is returned); a
// record that is not UTF-8 comes back empty, so the strict decoder rejects
// it as malformed and the connection goes on.
func readRecord(r *jsonl.Reader) ([]byte, error) {
	line, err := r.Next()
	if errors.Is(err, jsonl.ErrInvalidUTF8) {
		return []byte{}, nil
	}
	return line, err
}

// decodeStrict decodes one JSON object with exact fields: the
// internal/strictjson policy (trailing data, duplicate member names,
// invalid UTF-8 and member names that differ from the tags only in case
// are errors), and unknown members are errors too.
func decodeStrict(b []byte, v any) error {
	if err := strictjson.Unmarshal(b, v, &strictjson.Policy{RejectUnknownMembers: true}); err != nil {
		return fmt.Errorf("broker: decode: %w", err)
	}
	return nil
}

// decodeProbe reads the fields of v from one JSON object with the rules of
// decodeStrict, except that unknown members are ignored.
func decodeProbe(b []byte, v any) error { return strictjson.Unmarshal(b, v, nil) }

// marshalLine is v as one JSON line (the endpoint file's content).
func marshalLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("broker: encode: " + err.Error()) // plain types only: a bug
	}
	return append(b, '\n')
}
