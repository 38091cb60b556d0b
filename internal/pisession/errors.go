package pisession

import (
	"errors"
	"fmt"
)

var (
	// ErrNotSession means the first parsed line is not a session header
	// (an object of type "session" with a string id), or there is none.
	ErrNotSession = errors.New("pisession: not a Pi session file")
	// ErrMalformed marks a skipped line that JSON.parse would reject.
	ErrMalformed = errors.New("pisession: malformed JSON line")
	// ErrNotObject marks a skipped line that is JSON but not an object.
	ErrNotObject = errors.New("pisession: JSON line is not an object")
	// ErrUnknownEntry: Branch was asked for an id no entry has.
	ErrUnknownEntry = errors.New("pisession: no entry with that id")
	// ErrMissingParent: an entry's parentId names no entry.
	ErrMissingParent = errors.New("pisession: parent entry missing")
	// ErrCycle: parentId links loop.
	ErrCycle = errors.New("pisession: parentId cycle")
	// ErrEntryType: a typed accessor was called on an entry of another type.
	ErrEntryType = errors.New("pisession: wrong entry type")
)

// LineError is a line that stops [Read]: one longer than the cap
// (Err wraps jsonl.ErrOversized) or a read error.
type LineError struct {
	Line   int64 // 1-based line number
	Offset int64 // byte offset of the line's first byte
	Err    error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("pisession: line %d (offset %d): %v", e.Line, e.Offset, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// VersionError is a header whose version is older than 3 (a missing version
// means 1) or not a number.
type VersionError struct {
	Version string // the version as written, "" when missing
}

func (e *VersionError) Error() string {
	if e.Version == "" {
		return "pisession: session file version 1 (no version field); open it once with Pi to migrate it to v3"
	}
	return fmt.Sprintf("pisession: unsupported session file version %s; v3 or newer is read (Pi migrates older files)", e.Version)
}

// BranchError is a failed walk from a leaf. Kind is [ErrUnknownEntry],
// [ErrMissingParent] or [ErrCycle]; errors.Is compares only the kind.
type BranchError struct {
	Kind     error
	ID       string // the leaf (unknown entry) or the entry whose parent is missing or that starts the loop
	ParentID string // the missing parent (ErrMissingParent)
}

func (e *BranchError) Error() string {
	switch e.Kind {
	case ErrMissingParent:
		return fmt.Sprintf("%v: entry %q has parentId %q", e.Kind, e.ID, e.ParentID)
	default:
		return fmt.Sprintf("%v: %q", e.Kind, e.ID)
	}
}

func (e *BranchError) Is(target error) bool { return target == e.Kind }

func (e *BranchError) Unwrap() error { return e.Kind }

// TypeError is a typed accessor called on an entry of another type; it
// matches [ErrEntryType].
type TypeError struct {
	Want, Got string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("pisession: entry type %q, want %q", e.Got, e.Want)
}

func (e *TypeError) Is(target error) bool { return target == ErrEntryType }
