package runtime

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ContractVersion is the taskbar contract version every snapshot declares
// (seed 000 "Versioning").
const ContractVersion = 1

// SessionStatus is the canonical session state of a snapshot
// (seed 000 "Shared HTTP API and stable errors").
type SessionStatus string

// The session states. Clients branch only on these values.
const (
	SessionStarting    SessionStatus = "starting"
	SessionReady       SessionStatus = "ready"
	SessionBusy        SessionStatus = "busy"
	SessionResetting   SessionStatus = "resetting"
	SessionUnavailable SessionStatus = "unavailable"
)

// TaskStatus is the state of the one retained task.
type TaskStatus string

// The retained task states.
const (
	TaskRunning    TaskStatus = "running"
	TaskCancelling TaskStatus = "cancelling"
	TaskCompleted  TaskStatus = "completed"
	TaskFailed     TaskStatus = "failed"
	TaskCancelled  TaskStatus = "cancelled"
)

// Terminal reports whether the task can no longer change.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Snapshot is the complete canonical state every tab reads (seed 000). Key order does not matter on the wire;
// null fields are encoded as JSON null, never left out.
type Snapshot struct {
	ContractVersion int          `json:"contract_version"`
	Session         SessionState `json:"session"`
	Task            *TaskState   `json:"task"`
}

// SessionState is the session part of a [Snapshot]. ID is the
// runtime-generated opaque identity (never Pi's own sessionId); ID and
// Model are nil while the session is not established. Error is a fixed
// safe message or nil.
type SessionState struct {
	ID     *string       `json:"id"`
	Status SessionStatus `json:"status"`
	Model  *string       `json:"model"`
	Error  *string       `json:"error"`
}

// TaskState is the one retained task. Output is at most [MaxOutputBytes]
// bytes of the newest output, cut on a UTF-8 boundary; OutputTruncated
// stays true once older output was dropped. Timestamps use [TimeFormat].
type TaskState struct {
	ID              string     `json:"id"`
	Prompt          string     `json:"prompt"`
	Status          TaskStatus `json:"status"`
	Output          string     `json:"output"`
	OutputTruncated bool       `json:"output_truncated"`
	Activity        string     `json:"activity"`
	Error           *string    `json:"error"`
	StartedAt       string     `json:"started_at"`
	FinishedAt      *string    `json:"finished_at"`
}

// MaxOutputBytes bounds the retained task output (seed 000 "Pi progress,
// output, and safe failures": the newest 32 KiB).
const MaxOutputBytes = 32 * 1024

// TimeFormat is the snapshot timestamp layout: UTC, microseconds, "Z".
const TimeFormat = "2006-01-02T15:04:05.000000Z"

func timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// NewID returns an opaque identity: 18 random bytes, base64url without
// padding (24 characters), used for session and task ids.
func NewID() string {
	var b [18]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// UnavailableSnapshot returns the snapshot served when no verified Pi owner
// answers (for example the project broker is unreachable): session
// unavailable with the given fixed message and no task.
func UnavailableSnapshot(message string) Snapshot {
	m := message
	return Snapshot{
		ContractVersion: ContractVersion,
		Session:         SessionState{Status: SessionUnavailable, Error: &m},
	}
}

// MarshalSnapshot encodes s as compact JSON.
func MarshalSnapshot(s Snapshot) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("runtime: encode snapshot: " + err.Error()) // only plain types: a bug
	}
	return b
}

// appendOutput appends delta to out and keeps the newest MaxOutputBytes,
// dropping leading UTF-8 continuation bytes so no code point is split.
func appendOutput(out string, truncated bool, delta string) (string, bool) {
	s := out + delta
	if len(s) <= MaxOutputBytes {
		return s, truncated
	}
	s = s[len(s)-MaxOutputBytes:]
	i := 0
	for i < len(s) && i < utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:], true
}

// safeLabel turns an untrusted Pi label (a tool name, a model) into bounded
// display text: controls and bidi overrides become spaces, white space is
// collapsed and trimmed, and the result is cut to max bytes on a character
// boundary.
func safeLabel(s string, max int) string {
	s = strings.ToValidUTF8(s, " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) ||
			r == 0x200E || r == 0x200F || r == 0x061C {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}

func toolLabel(name string) string {
	if l := safeLabel(name, 100); l != "" {
		return l
	}
	return "a tool"
}

func ptr(s string) *string { return &s }
