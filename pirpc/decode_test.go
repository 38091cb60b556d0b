package pirpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// records decodes every record up to EOF; any error ends the test.
func records(t testing.TB, d *pirpc.Decoder) []pirpc.Record {
	t.Helper()
	var got []pirpc.Record
	for {
		rec, err := d.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatalf("record %d: %v", len(got)+1, err)
		}
		got = append(got, rec)
	}
}

// decodeAll returns, per record, the event type / "response:<id>" or the
// protocol error kind.
func decodeAll(t testing.TB, d *pirpc.Decoder) []string {
	t.Helper()
	var out []string
	for {
		rec, err := d.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			var pe *pirpc.ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("Next: non-protocol error %v", err)
			}
			out = append(out, "error:"+kindName(pe.Kind))
			continue
		}
		out = append(out, describe(rec))
	}
}

func describe(rec pirpc.Record) string {
	switch r := rec.(type) {
	case *pirpc.Response:
		return "response:" + r.ID
	case pirpc.Event:
		return r.EventType()
	}
	return "?"
}

func kindName(k error) string {
	for name, e := range map[string]error{
		"malformed": pirpc.ErrMalformedJSON, "not-object": pirpc.ErrNotObject, "oversized": pirpc.ErrOversized,
		"unterminated": pirpc.ErrUnterminated, "utf8": pirpc.ErrInvalidUTF8, "invalid": pirpc.ErrInvalidRecord,
	} {
		if k == e {
			return name
		}
	}
	return "unknown"
}

func TestDecoder_Framing(t *testing.T) {
	big := `{"type":"x","pad":"` + strings.Repeat("a", pirpc.MaxRecordSize) + `"}`
	exact := `{"type":"x","pad":"` + strings.Repeat("a", pirpc.MaxRecordSize-len(`{"type":"x","pad":""}`)) + `"}`
	tests := []struct {
		name, in string
		want     []string
	}{
		{"event", `{"type":"agent_start"}` + "\n", []string{"agent_start"}},
		{"crlf stripped", `{"type":"agent_start"}` + "\r\n", []string{"agent_start"}},
		{"response", `{"id":"a","type":"response","command":"abort","success":true}` + "\n", []string{"response:a"}},
		{"u2028 is data, not a line break", "{\"type\":\"message_update\",\"assistantMessageEvent\":{\"type\":\"text_delta\",\"delta\":\"a\u2028b\u2029c\"}}\n", []string{"message_update"}},
		{"unknown type is a raw event", `{"type":"future_event","x":1}` + "\n", []string{"future_event"}},
		{"type not first", `{"x":1,"type":"agent_settled"}` + "\n", []string{"agent_settled"}},
		{"escaped type", `{"type":"agent\u005fstart"}` + "\n", []string{"agent_start"}},
		{"malformed", "{not json\n", []string{"error:malformed"}},
		{"malformed after type", `{"type":"agent_start",}` + "\n", []string{"error:malformed"}},
		{"malformed unknown type", `{"type":"zzz",}` + "\n", []string{"error:malformed"}},
		{"empty line", "\n", []string{"error:malformed"}},
		{"array", "[1,2]\n", []string{"error:not-object"}},
		{"string", `"x"` + "\n", []string{"error:not-object"}},
		{"no type", `{"id":"a"}` + "\n", []string{"error:invalid"}},
		{"numeric type", `{"type":5}` + "\n", []string{"error:invalid"}},
		{"wrong field type", `{"type":"agent_settled","aborted":"yes"}` + "\n", []string{"error:invalid"}},
		{"invalid utf8", "{\"type\":\"x\",\"s\":\"\xff\"}\n", []string{"error:utf8"}},
		{"unterminated", `{"type":"agent_start"}` + "\n" + `{"type":"agent_`, []string{"agent_start", "error:unterminated"}},
		{"oversized then fine", big + "\n" + `{"type":"agent_start"}` + "\n", []string{"error:oversized", "agent_start"}},
		{"exactly the cap", exact + "\n", []string{"x"}},
		{"exactly the cap with CR", exact + "\r\n", []string{"x"}},
		{"bad record does not stop the stream", "[]\n{\"type\":\"agent_settled\",\"aborted\":true}\n", []string{"error:not-object", "agent_settled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeAll(t, pirpc.NewDecoder(strings.NewReader(tt.in)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecoder_ProtocolErrorPosition(t *testing.T) {
	in := `{"type":"agent_start"}` + "\n" + "[1]\n"
	d := pirpc.NewDecoder(strings.NewReader(in))
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := d.Next()
	var pe *pirpc.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if pe.Kind != pirpc.ErrNotObject || pe.Record != 2 || pe.Offset != 23 || pe.Size != 3 {
		t.Errorf("got %+v, want kind not-object, record 2, offset 23, size 3", pe)
	}
	if strings.Contains(pe.Error(), "[1]") {
		t.Errorf("error %q leaks record content", pe.Error())
	}
}

func TestDecoder_MaxRecordSize(t *testing.T) {
	d := pirpc.NewDecoder(strings.NewReader(`{"type":"agent_start"}` + "\n"))
	d.MaxRecordSize = 10
	if _, err := d.Next(); !errors.Is(err, pirpc.ErrOversized) {
		t.Errorf("err = %v, want ErrOversized", err)
	}
}

func TestDecoder_TypedFields(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"agent_settled","aborted":true}`,
		`{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[]},"isError":true,"durationMs":22}`,
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":2,"delayMs":200,"errorMessage":"500"}`,
		`{"type":"extension_ui_request","id":"u1","method":"select","title":"Pick","options":["a","b"]}`,
		`{"id":"s1","type":"response","command":"get_state","success":true,"data":{"sessionId":"x","model":"m"}}`,
	}, "\n") + "\n"
	got := records(t, pirpc.NewDecoder(strings.NewReader(in)))
	want := []pirpc.Record{
		&pirpc.AgentSettled{Aborted: true},
		&pirpc.ToolExecutionEnd{ToolCallID: "c1", ToolName: "bash", Result: json.RawMessage(`{"content":[]}`), IsError: true, DurationMs: 22},
		&pirpc.AutoRetryStart{Attempt: 1, MaxAttempts: 2, DelayMs: 200, ErrorMessage: "500"},
		&pirpc.ExtensionUIRequest{ID: "u1", Method: "select", Title: "Pick", Options: []string{"a", "b"}},
		&pirpc.Response{ID: "s1", Command: "get_state", Success: true, Data: json.RawMessage(`{"sessionId":"x","model":"m"}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// recordedStdout is Pi 1.6.0's raw stdout from the reference run.
func recordedStdout(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pitest.SharedDir(t), "reference", "pi-recordings", "pi-rpc-observed.stdout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecoder_ReplayRecordedStdout(t *testing.T) {
	raw := recordedStdout(t)
	got := records(t, pirpc.NewDecoder(bytes.NewReader(raw)))
	lines := bytes.Count(raw, []byte("\n"))
	if len(got) != lines {
		t.Fatalf("decoded %d records, want %d lines", len(got), lines)
	}
	// Cross-check every record's type with a plain decode of the same line.
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 2<<20)
	var text strings.Builder
	for i := 0; sc.Scan(); i++ {
		var plain struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &plain); err != nil {
			t.Fatal(err)
		}
		want := plain.Type
		if want == "response" {
			want = "response:" + plain.ID
		}
		if d := describe(got[i]); d != want {
			t.Errorf("record %d = %s, want %s", i+1, d, want)
		}
		if u, ok := got[i].(*pirpc.MessageUpdate); ok && u.AssistantMessageEvent.Type == "text_delta" {
			text.WriteString(u.AssistantMessageEvent.Delta)
		}
		if r, ok := got[i].(*pirpc.RawEvent); ok {
			t.Errorf("record %d: Pi's %q decoded as a raw event", i+1, r.Type)
		}
	}
	if text.Len() == 0 {
		t.Error("no text deltas in the recorded run")
	}
	var settledN int
	for _, r := range got {
		if s, ok := r.(*pirpc.AgentSettled); ok && !s.Aborted {
			settledN++
		}
	}
	if settledN != 1 {
		t.Errorf("agent_settled{aborted:false} seen %d times, want 1", settledN)
	}
}

// FuzzDecoder: never panics, and every record is a Record or a typed
// ProtocolError, while the byte offsets add up.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{"type":"agent_start"}` + "\n",
		`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"a"}}` + "\r\n",
		`{"id":"a","type":"response","command":"get_state","success":true,"data":{}}` + "\n",
		`{"type":"agent_settled","aborted":"x"}` + "\n[1]\n{bad\n",
		"{\"type\":\"x\u2028\"}\n\xff\n",
		`{"type":"extension_ui_request","id":"1","method":"confirm"}`,
		`{"type":"response","ID":"a","ſuccess":true,"command":"x"}` + "\n",
		`{"type":"agent_start","type":"response"}` + "\n" + `{"x":1,"type":"a","type":"b"}` + "\n",
		`{"type":"message_update","assistantMessageEvent":{"delta":"\ud83d"}}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d := pirpc.NewDecoder(bytes.NewReader(in))
		d.MaxRecordSize = 64
		for n := 0; ; n++ {
			if n > len(in)+1 {
				t.Fatal("more records than bytes")
			}
			rec, err := d.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var pe *pirpc.ProtocolError
				if !errors.As(err, &pe) || pe.Kind == nil {
					t.Fatalf("untyped error %v", err)
				}
				if pe.Offset < 0 || pe.Offset > int64(len(in)) {
					t.Fatalf("offset %d out of range", pe.Offset)
				}
				continue
			}
			switch r := rec.(type) {
			case *pirpc.Response:
			case pirpc.Event:
				if r.EventType() == "" {
					t.Fatal("event without type")
				}
			default:
				t.Fatalf("record %T", rec)
			}
		}
	})
}

// TestDecoder_ReplayAllRecordings decodes every stdout record of the
// reference recordings ({"dir","t_ms","rec"} lines; the compact rec is the
// raw line): all of Pi 1.6.0's types are known, none is a raw event.
func TestDecoder_ReplayAllRecordings(t *testing.T) {
	for _, name := range []string{"pi-rpc-observed.jsonl", "pi-rpc-observed-extension.jsonl", "pi-rpc-observed-queue-retry.jsonl"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(pitest.SharedDir(t), "reference", "pi-recordings", name))
			if err != nil {
				t.Fatal(err)
			}
			var stream bytes.Buffer
			for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
				var r struct {
					Dir string          `json:"dir"`
					Rec json.RawMessage `json:"rec"`
				}
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatal(err)
				}
				if r.Dir != "stdout" {
					continue
				}
				if err := json.Compact(&stream, r.Rec); err != nil {
					t.Fatal(err)
				}
				stream.WriteByte('\n')
			}
			seen := map[string]int{}
			for _, rec := range records(t, pirpc.NewDecoder(&stream)) {
				if r, ok := rec.(*pirpc.RawEvent); ok {
					t.Errorf("Pi 1.6.0 type %q decoded as a raw event", r.Type)
				}
				seen[strings.SplitN(describe(rec), ":", 2)[0]]++
			}
			if seen["response"] == 0 || seen["agent_settled"] == 0 {
				t.Errorf("types seen %v", seen)
			}
		})
	}
}
