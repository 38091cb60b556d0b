package pimessage_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// benchMessage is an assistant message of about size bytes with role first
// and toolCallId last, as Pi writes them.
func benchMessage(size int) []byte {
	text := strings.Repeat("lorem ipsum dolor sit amet ", size/27)
	m := map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "timestamp": 1}
	b, _ := json.Marshal(m)
	return append([]byte(`{"role":"toolResult",`), append(b[1:len(b)-1], []byte(`,"toolCallId":"c1"}`)...)...)
}

// streamField is the member reader piext had before pimessage (the first
// occurrence, stopping there): the in-run baseline.
func streamField(raw []byte, name string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil
		}
		if k, _ := tok.(string); k == name {
			return v
		}
	}
	return nil
}

// BenchmarkLookup reads the first member (role) and the last (toolCallId)
// of 1 KiB and 1 MiB messages; Baseline is the former streaming reader.
func BenchmarkLookup(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		raw := benchMessage(size.n)
		for _, member := range []string{"role", "toolCallId"} {
			b.Run(size.name+"/"+member+"/Baseline", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if streamField(raw, member) == nil {
						b.Fatal("absent")
					}
				}
			})
			b.Run(size.name+"/"+member+"/Lookup", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, ok := pimessage.Lookup(raw, member); !ok {
						b.Fatal("absent")
					}
				}
			})
		}
	}
}

// BenchmarkMessage reads four members (role, toolCallId, isError and
// content, as a context handler does) of one 1 KiB and one 1 MiB message:
// Baseline is the former streaming reader once per member, Scans a Message
// literal (one scan per accessor), OneScan a Message from NewMessage (one
// scan, then lookups).
func BenchmarkMessage(b *testing.B) {
	members := []string{"role", "toolCallId", "isError", "content"}
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		raw := benchMessage(size.n)
		b.Run(size.name+"/Baseline", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				for _, name := range members {
					_ = streamField(raw, name)
				}
			}
		})
		read := func(b *testing.B, m pimessage.Message) {
			if m.Role() == "" || m.ToolCallID() == "" || m.IsError() || m.Content() == nil {
				b.Fatal("absent")
			}
		}
		b.Run(size.name+"/Scans", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				read(b, pimessage.Message{Raw: raw})
			}
		})
		b.Run(size.name+"/OneScan", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				read(b, pimessage.NewMessage(raw))
			}
		})
	}
}

// BenchmarkText joins a 1 MiB text content.
func BenchmarkText(b *testing.B) {
	content := pimessage.NewMessage(benchMessage(1 << 20)).Content()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if pimessage.Text(content) == "" {
			b.Fatal("empty")
		}
	}
}

// BenchmarkPart_Text reads the text of the one part of a 1 KiB and a 1 MiB
// content through Part.Text; Text is the in-run baseline (the same
// content joined).
func BenchmarkPart_Text(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		content := pimessage.NewMessage(benchMessage(size.n)).Content()
		b.Run(size.name+"/Text", func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				if pimessage.Text(content) == "" {
					b.Fatal("empty")
				}
			}
		})
		b.Run(size.name+"/Part.Text", func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				if pimessage.Parts(content)[0].Text() == "" {
					b.Fatal("empty")
				}
			}
		})
	}
}
