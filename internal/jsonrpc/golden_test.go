package jsonrpc_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata")

// TestGolden replays testdata/*.txtar: in the file "transcript", a line
// "> X" is written to the connection, "< X" is the next line it must write.
// The handler answers "echo" with its params, "fail" with an invalid-params
// error, and "wait" once its ctx is cancelled.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, p := newRaw(t, handler(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				switch req.Method {
				case "echo":
					return req.Params, nil
				case "fail":
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad params"}
				case "wait":
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.Method}
			}))
			for i, f := range ar.Files {
				if f.Name != "transcript" {
					continue
				}
				var out []string
				for _, line := range strings.Split(strings.TrimRight(string(f.Data), "\n"), "\n") {
					switch {
					case strings.HasPrefix(line, "> "):
						p.send(t, line[2:])
						out = append(out, line)
					case strings.HasPrefix(line, "< "):
						got := p.recv(t)
						if !*update && got != line[2:] {
							t.Errorf("after %q:\n got %s\nwant %s", out[len(out)-1], got, line[2:])
						}
						out = append(out, "< "+got)
					default:
						out = append(out, line)
					}
				}
				ar.Files[i].Data = []byte(strings.Join(out, "\n") + "\n")
			}
			if *update {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tool/execute","params":{"tool":"x"}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`,
		`{"jsonrpc":"2.0","id":"s","result":null}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"m","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"x"}`,
		`[]`, `null`, `{"jsonrpc":"2.0","id":1,"method":"x","params":3}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[\"\xff\"]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, _, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			var e *jsonrpc.Error
			if !errors.As(err, &e) || (e.Code != jsonrpc.CodeParseError && e.Code != jsonrpc.CodeInvalidRequest) {
				t.Fatalf("decode error %v is not a parse/invalid-request *Error", err)
			}
			return
		}
		enc, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatalf("encode a decoded message: %v", err)
		}
		if strings.ContainsRune(string(enc), '\n') {
			t.Fatalf("encoded message holds a line feed: %q", enc)
		}
		again, _, err := jsonrpc.DecodeMessage(enc)
		if err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		enc2, _ := jsonrpc.EncodeMessage(again)
		if string(enc2) != string(enc) {
			t.Fatalf("round trip changed:\n%s\n%s", enc, enc2)
		}
	})
}
