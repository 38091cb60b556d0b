package piexttest

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"
)

// CheckSkills reports every SKILL.md in skills ([piext.Extension.Skills])
// that holds a character above U+00FF, one error per file naming its first
// such line (joined with [errors.Join]); nil when there is none.
//
// Pi reads a SKILL.md whole and slices the skill's name and description
// for the system prompt out of that string. V8 stores a string holding a
// character above U+00FF with two bytes per character, and a slice of it,
// and every string built from one, keeps that form even when the slice is
// plain ASCII: one such character anywhere in the file (in its body too)
// makes Pi's whole system prompt a two-byte string. The system prompt
// comes first in every model request, so JSON.stringify then writes the
// whole request body in two-byte form, which took about twice as long as
// the one-byte form for a 16 MB conversation (midcompact's long-session
// benchmark). Latin-1 characters (up to U+00FF) keep the one-byte form.
func CheckSkills(skills fs.FS) error {
	var errs []error
	err := fs.WalkDir(skills, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Base(p) != "SKILL.md" {
			return nil
		}
		raw, err := fs.ReadFile(skills, p)
		if err != nil {
			return err
		}
		if !utf8.Valid(raw) {
			errs = append(errs, fmt.Errorf("piexttest: %s: not UTF-8", p))
			return nil
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if r, ok := wideRune(line); ok {
				errs = append(errs, fmt.Errorf("piexttest: %s:%d: %q (U+%04X) is above U+00FF: Pi's system prompt becomes a two-byte string", p, i+1, r, r))
				break
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("piexttest: check skills: %w", err)
	}
	return errors.Join(errs...)
}

// wideRune returns the first rune of s above U+00FF.
func wideRune(s string) (rune, bool) {
	for _, r := range s {
		if r > 0xFF {
			return r, true
		}
	}
	return 0, false
}
