package midcompact

import (
	"errors"
	"fmt"
	"io"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// OfflineMaxRecord caps one session line for the offline commands (images
// travel inline as base64).
const OfflineMaxRecord = 64 << 20

// AtomInfo is one atom as `pikit midcompact atoms` prints it.
type AtomInfo struct {
	Ref               string       `json:"ref"`
	Kind              AtomKind     `json:"kind"`
	EntryIDs          []string     `json:"entryIds"`
	MessageKeys       []string     `json:"messageKeys"`
	Compressible      bool         `json:"compressible"`
	ProtocolClosed    bool         `json:"protocolClosed"`
	Protected         bool         `json:"protected"`
	ContentChars      int          `json:"contentChars"`
	ImageCount        int          `json:"imageCount"`
	ImagePayloadBytes int          `json:"imagePayloadBytes"`
	ToolProtocol      ToolProtocol `json:"toolProtocol,omitempty"` // tool atoms only
}

// readSessionFile reads a Pi session file for the offline commands.
func readSessionFile(r io.Reader) (*pisession.File, error) {
	f, err := pisession.Read(r, &pisession.Options{MaxRecord: OfflineMaxRecord})
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	return f, nil
}

// branchPath is the root→leaf path; a missing parent ends the path
// silently, as in Pi.
func branchPath(f *pisession.File, leaf string) ([]pisession.Entry, error) {
	path, err := f.Branch(leaf)
	if err != nil && !errors.Is(err, pisession.ErrMissingParent) {
		return nil, err
	}
	return path, nil
}

// FileAtoms reads a session file and lists the atoms of the branch ending at
// leaf ("" = the last entry in file order), projected through the branch's
// committed blocks as a transaction's snapshot would be. It fails on a
// file that is not a Pi v3 session, an oversized line, or an unknown leaf.
func FileAtoms(r io.Reader, leaf string) ([]AtomInfo, error) {
	f, err := readSessionFile(r)
	if err != nil {
		return nil, err
	}
	path, err := branchPath(f, leaf)
	if err != nil {
		return nil, err
	}
	snap, err := NewSnapshot(path, 0)
	if err != nil {
		return nil, err
	}
	out := make([]AtomInfo, len(snap.Atoms))
	for i := range snap.Atoms {
		a := &snap.Atoms[i]
		out[i] = AtomInfo{
			Ref: a.Ref, Kind: a.Kind, EntryIDs: nonNil(a.EntryIDs), MessageKeys: nonNil(a.MessageKeys),
			Compressible: a.Compressible, ProtocolClosed: a.ProtocolClosed, Protected: a.Protected(),
			ContentChars: a.Metrics.ContentChars, ImageCount: a.Metrics.ImageCount(),
			ImagePayloadBytes: a.Metrics.ImagePayloadBytes(), ToolProtocol: a.ToolProtocol,
		}
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// FileStatus is `/midcompact:status` for the session file's last entry,
// with the planning lock free (no runtime holds it offline).
func FileStatus(r io.Reader) (string, error) {
	f, err := readSessionFile(r)
	if err != nil {
		return "", err
	}
	path, err := branchPath(f, "")
	if err != nil {
		return "", err
	}
	restored := Restore(path)
	var snap *Snapshot
	if tx := restored.Transaction; tx != nil {
		if anchor, err := branchPath(f, tx.AnchorEntryID); err == nil {
			snap, _ = NewSnapshot(anchor, 0) // endpoints fall back to stored previews
		}
	}
	return StatusText(restored, snap, LockFree), nil
}
