package jsjson_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
)

//go:generate go test -run ^TestGolden$ -update .

var update = flag.Bool("update", false, "rewrite testdata/golden.json with the test Node")

const goldenPath = "testdata/golden.json"

type goldenCase struct {
	Src        string `json:"src"` // base64 of the JSON text bytes
	Sort       bool   `json:"sort"`
	IndexFirst bool   `json:"indexFirst"`
	Indent     string `json:"indent"`
	Out        string `json:"out"`
	Error      bool   `json:"error"`
}

type goldenNumber struct {
	Bits string `json:"bits"` // float64 bits, 16 hex digits
	Num  string `json:"num"`
}

type goldenFile struct {
	Node    string         `json:"node"`
	Cases   []goldenCase   `json:"cases"`
	Numbers []goldenNumber `json:"numbers"`
}

// nodeGen runs the generator with the test Node.
func nodeGen(t *testing.T) []byte {
	t.Helper()
	in := pitest.Require(t)
	cmd := exec.CommandContext(t.Context(), filepath.Join(in.NodeBin, "node"), "testdata/jsjson.js", "gen")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node jsjson.js gen: %v\n%s", err, stderr.Bytes())
	}
	return out
}

func readGolden(t testing.TB) goldenFile {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 || len(g.Numbers) == 0 {
		t.Fatal("golden file holds no vectors")
	}
	return g
}

func decodeSrc(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bitsFloat(t testing.TB, s string) float64 {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 8 {
		t.Fatalf("bad bits %q", s)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

// TestGolden compares Reencode and FormatNumber with the vectors Node wrote.
func TestGolden(t *testing.T) {
	if *update {
		if err := os.WriteFile(goldenPath, nodeGen(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := readGolden(t)
	fails := 0
	for i, c := range g.Cases {
		src := decodeSrc(t, c.Src)
		got, err := jsjson.Reencode(src, &jsjson.Options{SortKeys: c.Sort, IndexKeysFirst: c.IndexFirst, Indent: c.Indent})
		switch {
		case c.Error:
			var se *jsjson.SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("case %d %q: got %q, %v; want a *SyntaxError (JSON.parse throws)", i, src, got, err)
				fails++
			}
		case err != nil:
			t.Errorf("case %d %q: %v; want %q", i, src, err, c.Out)
			fails++
		case string(got) != c.Out:
			t.Errorf("case %d %q (sort %v, index first %v, indent %q):\n got %q\nwant %q", i, src, c.Sort, c.IndexFirst, c.Indent, got, c.Out)
			fails++
		}
		if fails > 20 {
			t.Fatal("too many failures")
		}
	}
	for _, n := range g.Numbers {
		f := bitsFloat(t, n.Bits)
		if got := jsjson.FormatNumber(f); got != n.Num {
			t.Errorf("FormatNumber(%v bits %s) = %q, want %q", f, n.Bits, got, n.Num)
		}
	}
	t.Logf("%d Reencode vectors, %d number vectors (Node %s)", len(g.Cases), len(g.Numbers), g.Node)
}

// TestGolden_RealNodeCurrent regenerates the vectors with the test Node and
// requires the committed file to be the same: a stale golden file fails.
func TestGolden_RealNodeCurrent(t *testing.T) {
	got := nodeGen(t)
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("testdata/golden.json is stale: run go test -run TestGolden -update ./internal/jsjson/")
	}
}
