// Package pisession reads Pi session files (format v3, reference
// pi-rpc-and-extensions.md §4): a header line of type "session", then one
// entry per line with id, parentId, type and timestamp, forming a tree whose
// branches are walked from a leaf to the root.
//
// Entries stay opaque JSON ([Entry.Raw]) with typed accessors, so fields a
// newer Pi adds are never dropped; [Entry.Message], [Entry.Custom] and the
// other accessors decode the common entry types into small views that keep
// nested parts raw. Entry types, roles and messages are those of pikit's one
// model of Pi's data, internal/pimessage ([Message] is pimessage.Message);
// [EntriesOf] reads entries Pi hands an extension as Read reads lines.
//
// # What is read as Pi reads it
//
// Pi 1.6.0 loads a session file line by line (LF) and skips blank lines and
// lines JSON.parse rejects; the first parsed line must be an object of type
// "session" with a string id, or the file is not a session (Pi then starts
// afresh; [Read] returns [ErrNotSession]); JSON null, false, 0 and "" lines
// are passed over there, being falsy in JS. A last line without LF is parsed
// too. Read does the same and lists every skipped non-blank line in
// [File.Skipped] with its line number and reason; it never fails on one.
// Lines that are JSON but not objects are skipped too (Pi keeps them as
// entries without an id; nothing can reach them). Lines of type "session"
// after the header are not entries, as in Pi's getEntries.
//
// Bytes that are not UTF-8 are read as U+FFFD, one per maximal invalid
// subsequence, as Pi's UTF-8 decoding does (Raw then holds the U+FFFD, not
// the bad bytes).
//
// Where Read differs: a line longer than [Options.MaxRecord] is an error
// ([*LineError] wrapping jsonl.ErrOversized) rather than a silent loss;
// raise the cap for files that carry large extension data. Files older than
// v3 are a [*VersionError]: Pi migrates them (v1 gets fresh random ids) and
// rewrites them when it opens them. TestRead_RealPiLoader holds Read to Pi
// 1.6.0's own loader and getBranch on the same files.
//
// # Branches
//
// [File.Branch] walks parentId links from a leaf to a root and returns the
// path root first, as Pi's getBranch. A parentId naming no entry gives the
// path found so far and [ErrMissingParent] (Pi stops there silently); a loop
// gives [ErrCycle]. When an id occurs twice, the later entry wins, as in Pi's
// index.
//
// # Example
//
//	f, err := pisession.Read(file, &pisession.Options{MaxRecord: 64 << 20})
//	if err != nil {
//		return err
//	}
//	path, err := f.Branch("") // the current leaf: the last entry
//	for _, e := range path {
//		if m, err := e.Message(); err == nil && m.Role() == pimessage.RoleUser {
//			// m.Raw is the AgentMessage as written
//		}
//	}
package pisession
