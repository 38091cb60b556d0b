package pisession_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// sessionVariants returns session files for the comparison with Pi's
// loader: the recording, the crafted tree, and random damage to both
// (dropped, repeated and foreign lines, flipped bytes, invalid UTF-8, CRLF,
// truncation).
func sessionVariants(t *testing.T, n int) [][]byte {
	t.Helper()
	rec, err := os.ReadFile(recordingPath(t))
	if err != nil {
		t.Fatal(err)
	}
	bases := [][]byte{rec, []byte(tree)}
	out := append([][]byte(nil), bases...)
	junk := []string{"{bad", "5", "null", "[]", "[1]", `"s"`, "0", "false", `{"type":"session","id":"x","version":3}`, "\xff\xfe",
		"\xe2\x82", "\xef\xbb\xbf" + `{"type":"x","id":"bom"}`, "", "   ", "\t", `{"type":"x","id":"d","parentId":null}`,
		`{"type":"x","id":"e","id":"f"}`, `{"type":"x","id":"\ud800"}`, `{"Type":"x","ID":"y"}`, "{\"type\":\"x\",\"id\":\"g\"}\r"}
	r := rand.New(rand.NewPCG(3, 14))
	for range n {
		lines := strings.Split(strings.TrimSuffix(string(bases[r.IntN(len(bases))]), "\n"), "\n")
		for range 1 + r.IntN(4) {
			i := r.IntN(len(lines))
			switch r.IntN(6) {
			case 0:
				if i > 0 || r.IntN(4) == 0 {
					lines = append(lines[:i], lines[i+1:]...)
				}
			case 1:
				lines = append(lines[:i+1], lines[i:]...)
			case 2:
				lines = append(lines[:i], append([]string{junk[r.IntN(len(junk))]}, lines[i:]...)...)
			case 3:
				if b := []byte(lines[i]); len(b) > 0 {
					b[r.IntN(len(b))] = byte(r.IntN(256))
					lines[i] = string(b)
				}
			case 4:
				if b := lines[i]; len(b) > 0 {
					j := r.IntN(len(b))
					lines[i] = b[:j] + "\xc3" + b[j:]
				}
			default:
				lines[i] += "\r"
			}
		}
		s := strings.Join(lines, "\n")
		if r.IntN(3) > 0 {
			s += "\n"
		} else if r.IntN(2) == 0 {
			s = s[:r.IntN(len(s)+1)]
		}
		out = append(out, []byte(s))
	}
	return out
}

// TestRead_RealPiLoader reads files with Read and with Pi 1.6.0's own
// loader, and requires the same header and entries (compared as
// JSON.stringify output, through jsjson.Reencode).
func TestRead_RealPiLoader(t *testing.T) {
	in := pitest.Require(t)
	sm := filepath.Join(filepath.Dir(filepath.Dir(in.CLI)), "core", "session-manager.js")
	files := sessionVariants(t, 300)
	dir := t.TempDir()
	paths := make([]string, len(files))
	type result struct {
		f   *pisession.File
		err error
	}
	ours := make([]result, len(files))
	for i, b := range files {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%03d.jsonl", i))
		if err := os.WriteFile(paths[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := pisession.Read(bytes.NewReader(b), &pisession.Options{MaxRecord: 1 << 20})
		ours[i] = result{f, err}
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(in.NodeBin, "node"), append([]string{"testdata/piload.mjs", sm}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node piload.mjs: %v\n%s", err, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	compared, notSession, versions, branches := 0, 0, 0, 0
	for i := 0; sc.Scan(); i++ {
		var pi struct {
			Header   *string              `json:"header"`
			Entries  []string             `json:"entries"`
			Leaf     *string              `json:"leaf"`
			Branches map[string]*[]string `json:"branches"`
		}
		if err := json.Unmarshal(sc.Bytes(), &pi); err != nil {
			t.Fatal(err)
		}
		got := ours[i]
		var ve *pisession.VersionError
		switch {
		case pi.Header == nil:
			notSession++
			if !errors.Is(got.err, pisession.ErrNotSession) {
				t.Errorf("file %d %q: Pi finds no session, Read: %v", i, files[i], got.err)
			}
			continue
		case errors.As(got.err, &ve):
			versions++ // Pi migrates such files; Read refuses them
			continue
		case got.err != nil:
			t.Errorf("file %d %q: Pi reads it, Read: %v", i, files[i], got.err)
			continue
		}
		compared++
		if h := reencode(t, got.f.Header.Raw); h != *pi.Header {
			t.Errorf("file %d: header %s, Pi %s", i, h, *pi.Header)
		}
		var mine []string
		for _, e := range got.f.Entries {
			mine = append(mine, reencode(t, e.Raw))
		}
		if strings.Join(mine, "\n") != strings.Join(pi.Entries, "\n") {
			t.Errorf("file %d %q:\nRead %q\nPi   %q", i, files[i], mine, pi.Entries)
		}
		for id, want := range pi.Branches {
			path, err := got.f.Branch(id)
			switch {
			case want == nil:
				if !errors.Is(err, pisession.ErrCycle) {
					t.Errorf("file %d: Branch(%q) = %v, %v; Pi loops", i, id, ids(path), err)
				}
			case err != nil && !errors.Is(err, pisession.ErrMissingParent):
				t.Errorf("file %d: Branch(%q): %v", i, id, err)
			case strings.Join(ids(path), ",") != strings.Join(*want, ","):
				t.Errorf("file %d: Branch(%q) = %v, Pi getBranch %v", i, id, ids(path), *want)
			}
			branches++
		}
		if pi.Leaf != nil && len(got.f.Entries) > 0 && got.f.Entries[len(got.f.Entries)-1].ID != *pi.Leaf {
			t.Errorf("file %d: leaf %q, Pi %q", i, got.f.Entries[len(got.f.Entries)-1].ID, *pi.Leaf)
		}
	}
	if compared+notSession+versions != len(files) {
		t.Fatalf("node answered for %d of %d files", compared+notSession+versions, len(files))
	}
	t.Logf("%d files: %d compared entry by entry, %d branches; %d not a session for both, %d older versions",
		len(files), compared, branches, notSession, versions)
}

func reencode(t *testing.T, raw []byte) string {
	t.Helper()
	b, err := jsjson.Reencode(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
