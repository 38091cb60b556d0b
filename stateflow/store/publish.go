package store

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pikit-dev/pikit/internal/durable"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// write is one planned file update: new bytes, or removal.
type write struct {
	Rel    string
	Data   []byte
	Remove bool
}

// Publication messages (reference §2.6).
const msgBaseChanged = "Temporal State Flow base or scope identity changed concurrently"

// journalDoc is the cohort journal (see the package doc "Crash atomicity"):
// every target's pre-image identity and post-image bytes.
type journalDoc struct {
	Version int            `json:"version"`
	Files   []journalEntry `json:"files"`
}

type journalEntry struct {
	Path string `json:"path"`
	Pre  string `json:"pre"`
	Post string `json:"post"`
	Data string `json:"data,omitempty"` // base64 of the post image
}

// publisher writes one cohort under the held store lock.
type publisher struct {
	layout Layout
	roots  *sf.Roots
}

// publish runs reference §2.6 steps 4–10 plus the crash-atomic journal:
// re-capture and compare with basis; decode the would-be cohort; per-file
// CAS; write the journal (durable); write every file (fsynced, one fsync
// per directory); verify; remove the journal. On failure, files still holding
// this publisher's output get their pre-image back.
func (p *publisher) publish(basis capture, writes []write) error {
	// Re-capture the files this cohort does not write; the written ones are
	// compared one by one just before each is replaced (apply).
	writing := map[string]bool{}
	for _, w := range writes {
		writing[w.Rel] = true
	}
	for k, f := range basis {
		if writing[k] {
			continue
		}
		data, ok, err := readFile(p.layout.Root, k)
		if err != nil {
			return err
		}
		if identityOf(data, ok) != f.identity() {
			return &Error{Msg: msgBaseChanged}
		}
	}
	if _, err := decodeCohort(p.layout, p.roots, basis.with(writes)); err != nil {
		return fmt.Errorf("stateflow: would-be cohort does not decode: %w", err)
	}
	doc := journalDoc{Version: 1}
	for _, w := range writes {
		if !p.layout.owned(w.Rel) {
			return ErrNotOwned
		}
		e := journalEntry{Path: w.Rel, Pre: basis[w.Rel].identity(), Post: identityOf(w.Data, !w.Remove)}
		if !w.Remove {
			e.Data = base64.StdEncoding.EncodeToString(w.Data)
		}
		doc.Files = append(doc.Files, e)
		if d := filepath.Dir(w.Rel); !writing["dir:"+d] {
			writing["dir:"+d] = true
			if err := ensureDirs(p.layout.Root, w.Rel); err != nil {
				return err
			}
		}
	}
	jb, err := sf.CanonicalLine(doc)
	if err != nil {
		return err
	}
	journal := filepath.Join(p.layout.Root, fileJournal)
	if err := durable.WriteFile(journal, jb, 0o600); err != nil {
		return fmt.Errorf("stateflow: write cohort journal: %w", err)
	}
	done, err := p.apply(basis, writes)
	if err == nil {
		err = p.verify(writes)
	}
	if err != nil {
		return errors.Join(err, p.rollback(basis, writes[:done]), os.Remove(journal))
	}
	if err := os.Remove(journal); err != nil {
		return fmt.Errorf("stateflow: remove cohort journal: %w", err)
	}
	return nil
}

// apply writes the files; it returns how many were replaced.
func (p *publisher) apply(basis capture, writes []write) (int, error) {
	dirs := map[string]bool{}
	for i, w := range writes {
		cur, ok, err := readFile(p.layout.Root, w.Rel)
		if err != nil {
			return i, err
		}
		if identityOf(cur, ok) != basis[w.Rel].identity() {
			return i, &Error{Msg: fmt.Sprintf("State Flow file conflict at %s; concurrent bytes preserved", p.abs(w.Rel))}
		}
		if err := p.put(w.Rel, w.Data, w.Remove, true); err != nil {
			return i, err
		}
		dirs[filepath.Dir(p.abs(w.Rel))] = true
	}
	for d := range dirs {
		if err := durable.SyncDir(d); err != nil {
			return len(writes), fmt.Errorf("stateflow: sync store directory: %w", err)
		}
	}
	return len(writes), nil
}

func (p *publisher) abs(relPath string) string {
	return filepath.Join(p.layout.Root, filepath.FromSlash(relPath))
}

// put replaces or removes one file.
func (p *publisher) put(relPath string, data []byte, remove, noSyncDir bool) error {
	if remove {
		if err := os.Remove(p.abs(relPath)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stateflow: remove: %w", err)
		}
		return nil
	}
	if err := durable.WriteFileOpts(p.abs(relPath), data, 0o600, &durable.WriteOptions{NoSyncDir: noSyncDir}); err != nil {
		return fmt.Errorf("stateflow: write: %w", err)
	}
	return nil
}

// verify re-reads every target and requires the intended bytes.
func (p *publisher) verify(writes []write) error {
	for _, w := range writes {
		cur, ok, err := readFile(p.layout.Root, w.Rel)
		if err != nil {
			return err
		}
		if ok == w.Remove || !bytes.Equal(cur, w.Data) {
			return &Error{Msg: fmt.Sprintf("State Flow file conflict at %s; concurrent bytes preserved", p.abs(w.Rel))}
		}
	}
	return nil
}

// rollback restores the pre-image of every written file that still holds
// this publisher's output, in reverse order.
func (p *publisher) rollback(basis capture, written []write) error {
	var errs []error
	for i := len(written) - 1; i >= 0; i-- {
		w := written[i]
		cur, ok, err := readFile(p.layout.Root, w.Rel)
		if err != nil || identityOf(cur, ok) != identityOf(w.Data, !w.Remove) {
			continue // not ours any more: preserved
		}
		pre := basis[w.Rel]
		if err := p.put(w.Rel, pre.Data, !pre.Exists, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RecoveryError reports a cohort journal that was discarded because a target
// held neither its pre- nor its post-image (another writer changed it).
type RecoveryError struct{ Path string }

func (e *RecoveryError) Error() string {
	return fmt.Sprintf("stateflow: cohort journal discarded: %s holds neither the old nor the new image", e.Path)
}

// recoverJournal completes an interrupted publication, under the store lock:
// when every target holds its pre- or post-image, the post-images are
// written; otherwise the journal is discarded and a *RecoveryError returned.
// A journal that does not decode was never committed (durable.WriteFile
// renames it into place whole) and cannot exist; it is discarded too.
func (p *publisher) recoverJournal() error {
	journal := filepath.Join(p.layout.Root, fileJournal)
	data, ok, err := readFile(p.layout.Root, fileJournal)
	if err != nil || !ok {
		return err
	}
	var doc journalDoc
	v, derr := sf.DecodeValue(data)
	if derr == nil {
		derr = decodeJournal(v, &doc)
	}
	if derr != nil {
		return errors.Join(fmt.Errorf("stateflow: cohort journal discarded: %w", derr), os.Remove(journal))
	}
	type pending struct {
		rel  string
		data []byte
		rm   bool
	}
	var todo []pending
	for _, e := range doc.Files {
		cur, ok, err := readFile(p.layout.Root, e.Path)
		if err != nil {
			return err
		}
		id := identityOf(cur, ok)
		if id == e.Post {
			continue
		}
		if id != e.Pre {
			return errors.Join(&RecoveryError{Path: e.Path}, os.Remove(journal))
		}
		b, err := base64.StdEncoding.DecodeString(e.Data)
		if err != nil || identityOf(b, e.Post != "missing") != e.Post {
			return errors.Join(&RecoveryError{Path: e.Path}, os.Remove(journal))
		}
		todo = append(todo, pending{e.Path, b, e.Post == "missing"})
	}
	for _, t := range todo {
		if err := ensureDirs(p.layout.Root, t.rel); err != nil {
			return err
		}
		if err := p.put(t.rel, t.data, t.rm, false); err != nil {
			return err
		}
	}
	if err := os.Remove(journal); err != nil {
		return fmt.Errorf("stateflow: remove cohort journal: %w", err)
	}
	return durable.SyncDir(p.layout.Root)
}

func decodeJournal(v any, doc *journalDoc) error {
	m, ok := v.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	files, ok := m["files"].([]any)
	if !ok {
		return errors.New("no files")
	}
	for _, f := range files {
		fm, ok := f.(map[string]any)
		if !ok {
			return errors.New("bad entry")
		}
		e := journalEntry{}
		e.Path, _ = fm["path"].(string)
		e.Pre, _ = fm["pre"].(string)
		e.Post, _ = fm["post"].(string)
		e.Data, _ = fm["data"].(string)
		if !validStorePath(e.Path) || e.Pre == "" || e.Post == "" {
			return errors.New("bad entry")
		}
		doc.Files = append(doc.Files, e)
	}
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func canonicalLine(v any) ([]byte, error) { return sf.CanonicalLine(v) }
