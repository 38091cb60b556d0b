// Package durable is pikit's one recipe for files that must survive a crash
// (SIGKILL or power loss at any instant): whole files replaced atomically,
// and append-only JSON-lines journals. Every package that writes state uses
// it instead of its own rename and fsync (STYLE.md "What we take" §10).
//
// # Whole files
//
// [WriteFile] writes a temporary file next to the target, writes the data,
// fsyncs it, closes it, renames it over the target and fsyncs the directory.
// When it returns nil the new content is durable; after a crash at any
// instant the target holds either the old or the new content, never a mix.
// When any step fails, the temporary file is removed and the error of that
// step is returned. A temporary file is named ".NAME.tmp-" followed by 16
// lowercase hex digits, so [RemoveTemps] can clear the ones a crash left
// behind without touching anyone else's files.
//
// [Create] is the same recipe for content that arrives in pieces (an upload
// streamed from a request body): its [Writer] takes Writes, then Commit
// publishes the file as WriteFile does, or Abort drops it. Until Commit the
// target is untouched; a crash leaves only a temporary file.
//
// # Several files
//
// [WriteFiles] publishes several files, each atomically, with one directory
// fsync per directory; the set as a whole is not atomic. A caller that needs
// a set to change all at once writes the new files under fresh names with
// [WriteFileOpts] and NoSyncDir, calls [SyncDir] once, and then publishes a
// single small file that names them (a manifest) with [WriteFile]: the
// manifest's rename is the commit point. [Rename] moves a file or directory
// and fsyncs the directories involved.
//
// # Journals
//
// [Journal] is an append-only file of JSON records, one per line (LF). Each
// [Journal.Append] call writes its batch in one write and fsyncs once; only
// then does it return. [OpenJournal] returns the intact records and cuts a
// torn tail (a last line without LF, or an invalid last record) left by a
// crash during an append. [ReadJournal] reads the intact records without
// writing, for readers beside the writer (a replay, a status command).
//
// # Errors
//
// Every file-system failure is an [*Error] naming the step and the file
// (its message holds the base name only, never an absolute path). When the
// underlying cause is ENOSPC or EDQUOT, errors.Is(err, [ErrDiskFull]) is
// true. A record Append refuses is a [*RecordError]; a journal with an
// invalid record before intact ones is a [*CorruptError] ([ErrCorrupt]).
// A journal whose write or fsync failed in a way it could not undo answers
// every later Append with [ErrJournalFailed].
//
// # Example
//
//	if err := durable.MkdirAll(dir, 0o700); err != nil {
//		return err
//	}
//	if err := durable.RemoveTemps(dir); err != nil { // on open, while we own dir
//		return err
//	}
//	if err := durable.WriteFile(filepath.Join(dir, "board.json"), data, 0o600); err != nil {
//		return err // errors.Is(err, durable.ErrDiskFull) on a full disk
//	}
//	j, records, err := durable.OpenJournal(filepath.Join(dir, "events.ndjson"), nil)
//	if err != nil {
//		return err
//	}
//	defer j.Close()
//	replay(records)
//	return j.Append([]byte(`{"seq":1}`), []byte(`{"seq":2}`)) // acknowledged once nil
package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pikit-dev/pikit/internal/platform"
)

// ErrDiskFull matches (errors.Is) an error whose cause is ENOSPC (no space
// left on device) or EDQUOT (disk quota exceeded), from any step (Windows:
// ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL, ERROR_DISK_QUOTA_EXCEEDED).
var ErrDiskFull = errors.New("durable: disk full")

// Error is the error of one failed step on one file. Op is the step
// ("create temp", "write", "fsync", "close", "rename", "fsync dir",
// "truncate", "read", ...), Path the file or directory as the caller named
// it, Err the cause. Error() shows only the base name of Path, so the
// message can be logged without an absolute path.
type Error struct {
	Op   string
	Path string
	Err  error
}

func (e *Error) Error() string {
	return "durable: " + e.Op + " " + filepath.Base(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the cause, and [ErrDiskFull] too when the cause is ENOSPC
// or EDQUOT.
func (e *Error) Unwrap() []error {
	if isDiskFull(e.Err) {
		return []error{ErrDiskFull, e.Err}
	}
	return []error{e.Err}
}

func isDiskFull(err error) bool { return platform.IsDiskFull(err) }

// fail returns nil for a nil err, else an *Error. The os package's path
// errors are replaced by their cause: the *Error names the step and the
// file already, and their messages hold absolute paths.
func fail(op, path string, err error) error {
	switch e := err.(type) {
	case nil:
		return nil
	case *fs.PathError:
		err = e.Err
	case *os.LinkError:
		err = e.Err
	case *os.SyscallError:
		err = e.Err
	}
	return &Error{Op: op, Path: path, Err: err}
}
