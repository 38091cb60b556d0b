package pisession_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// bigSession builds a session file of about 15 MB: the recording's entries
// chained again and again, and every 50th entry a custom entry of 64 KiB.
func bigSession(b *testing.B) []byte {
	b.Helper()
	src, err := os.ReadFile(recordingPath(b))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	var buf bytes.Buffer
	buf.WriteString(lines[0] + "\n")
	parent := "null"
	blob := strings.Repeat("data ", 64<<10/5)
	for i := 0; buf.Len() < 15<<20; i++ {
		var m map[string]any
		if i%50 == 49 {
			m = map[string]any{"type": "custom", "customType": "big", "data": map[string]any{"blob": blob}}
		} else if err := json.Unmarshal([]byte(lines[1+i%(len(lines)-1)]), &m); err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("%08x", i)
		m["id"] = id
		m["parentId"] = json.RawMessage(parent)
		line, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
		parent = `"` + id + `"`
	}
	return buf.Bytes()
}

// BenchmarkRead reads a 15 MB session file; the baseline decodes the same
// lines with encoding/json into the four common fields, keeping each line.
func BenchmarkRead(b *testing.B) {
	src := bigSession(b)
	b.Run("encoding-json-lines", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			r := bufio.NewReaderSize(bytes.NewReader(src), 64<<10)
			n := 0
			for {
				line, err := r.ReadBytes('\n')
				if len(line) == 0 && err != nil {
					break
				}
				var e struct {
					Type      string  `json:"type"`
					ID        string  `json:"id"`
					ParentID  *string `json:"parentId"`
					Timestamp string  `json:"timestamp"`
				}
				if err := json.Unmarshal(line, &e); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n < 1000 {
				b.Fatal("too few lines")
			}
		}
	})
	b.Run("pisession", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			f, err := pisession.Read(bytes.NewReader(src), &pisession.Options{MaxRecord: 1 << 20})
			if err != nil {
				b.Fatal(err)
			}
			if len(f.Entries) < 1000 || len(f.Skipped) != 0 {
				b.Fatal("unexpected read")
			}
		}
	})
}
