package jsjson_test

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// nodeOracle is one long-lived `node testdata/jsjson.js serve`: one JSON
// request line in, one answer line out.
type nodeOracle struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

type oracleAnswer struct {
	Out   *string `json:"out"`
	Error bool    `json:"error"`
	Num   string  `json:"num"`
}

// startOracle starts the oracle with the test Node; it is stopped when the
// test ends.
func startOracle(tb testing.TB, in *pitest.Install) *nodeOracle {
	tb.Helper()
	cmd := exec.Command(filepath.Join(in.NodeBin, "node"), "testdata/jsjson.js", "serve")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	o := &nodeOracle{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	tb.Cleanup(func() {
		o.stdin.Close() // the oracle exits at EOF
		if err := o.cmd.Wait(); err != nil {
			tb.Errorf("node oracle: %v", err)
		}
	})
	return o
}

func (o *nodeOracle) ask(req any) (oracleAnswer, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return oracleAnswer{}, err
	}
	if _, err := o.stdin.Write(append(b, '\n')); err != nil {
		return oracleAnswer{}, fmt.Errorf("write to node: %w", err)
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		return oracleAnswer{}, fmt.Errorf("read from node: %w", err)
	}
	var a oracleAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		return oracleAnswer{}, fmt.Errorf("node answer %q: %w", line, err)
	}
	return a, nil
}

// stringify asks what JSON.stringify(JSON.parse(src)) is; ok is false when
// JSON.parse throws. The indent goes as bytes, so Node reads invalid UTF-8
// in it as jsjson does (TextDecoder), not as encoding/json would.
func (o *nodeOracle) stringify(src []byte, opts jsjson.Options) (out string, ok bool, err error) {
	a, err := o.ask(map[string]any{"src": base64.StdEncoding.EncodeToString(src), "sort": opts.SortKeys,
		"indexFirst": opts.IndexKeysFirst, "indent64": base64.StdEncoding.EncodeToString([]byte(opts.Indent))})
	if err != nil || a.Error {
		return "", false, err
	}
	if a.Out == nil {
		return "", false, fmt.Errorf("node answer without out")
	}
	return *a.Out, true, nil
}

func (o *nodeOracle) number(f uint64) (string, error) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], f)
	a, err := o.ask(map[string]any{"bits": hex.EncodeToString(b[:])})
	return a.Num, err
}
