package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/pikit-dev/pikit/internal/strictjson"
)

// ID is a request id: a string or an integer (JSON-RPC 2.0 §4). The zero ID
// is invalid and marks a notification.
type ID struct {
	str   string
	num   int64
	isStr bool
	valid bool
}

// Int64ID returns the integer id n.
func Int64ID(n int64) ID { return ID{num: n, valid: true} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{str: s, isStr: true, valid: true} }

// IsValid reports whether id is set (a notification's id is not).
func (id ID) IsValid() bool { return id.valid }

// String formats id for logs: a quoted string or a number; "<none>" when unset.
func (id ID) String() string {
	switch {
	case !id.valid:
		return "<none>"
	case id.isStr:
		return strconv.Quote(id.str)
	default:
		return strconv.FormatInt(id.num, 10)
	}
}

// MarshalJSON encodes id as a JSON string or number (null when unset).
func (id ID) MarshalJSON() ([]byte, error) {
	switch {
	case !id.valid:
		return []byte("null"), nil
	case id.isStr:
		return json.Marshal(id.str)
	default:
		return strconv.AppendInt(nil, id.num, 10), nil
	}
}

// UnmarshalJSON accepts a string, an integer or null.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*id = ID{}
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = StringID(s)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("id %.32s is neither a string nor an integer", b)
	}
	*id = Int64ID(n)
	return nil
}

// Message is a JSON-RPC 2.0 message: a *Request or a *Response. The set is
// closed (the method is unexported).
type Message interface{ isMessage() }

// Request is a call (ID set) or a notification (ID unset). Params stay raw
// until the handler knows their type.
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage // nil when absent
}

// IsCall reports whether r expects a response.
func (r *Request) IsCall() bool { return r.ID.IsValid() }

// Response answers a call: Result on success, Error on failure.
type Response struct {
	ID     ID // unset for a parse error the id of which could not be read
	Result json.RawMessage
	Error  *Error
}

func (*Request) isMessage()  {}
func (*Response) isMessage() {}

// wire is the one struct every message is read into and written from.
type wire struct {
	Version string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// knownMembers are the member names DecodeMessage accepts; matching is exact
// (case-sensitive), unlike encoding/json's struct decoding.
var knownMembers = map[string]bool{"jsonrpc": true, "id": true, "method": true, "params": true, "result": true, "error": true}

// DecodeMessage decodes one JSON-RPC 2.0 message. It is the one decoder for
// untrusted input, with the internal/strictjson policy: member names match
// exactly; a duplicate member name anywhere, unknown members, a version
// other than "2.0", both or neither of method and result/error, and params
// other than an object or array are *Error{Code: CodeInvalidRequest}
// (CodeParseError for text that is not a JSON object). The returned id is
// the message's id when it could be read, so the caller can answer it
// (after a duplicate name, only when the object has exactly one "id").
func DecodeMessage(b []byte) (Message, ID, error) {
	var members map[string]jsontext.Value
	if err := strictjson.Unmarshal(b, &members, &strictjson.Policy{AllowInvalidUTF8: true}); err != nil || members == nil {
		if errors.Is(err, strictjson.ErrDuplicateName) {
			id, _ := singleID(b)
			return nil, id, invalid("duplicate member name")
		}
		return nil, ID{}, &Error{Code: CodeParseError, Message: "parse error: not a JSON object"}
	}
	var id ID
	if raw, ok := members["id"]; ok {
		if err := id.UnmarshalJSON(raw); err != nil {
			return nil, ID{}, invalid("%v", err)
		}
	}
	for k := range members {
		if !knownMembers[k] {
			return nil, id, invalid("unknown member %q", k)
		}
	}
	// One parse: members are decoded one by one from the map, params and
	// result stay the raw slices of the input.
	var w wire
	if raw, ok := members["jsonrpc"]; !ok || strictjson.Unmarshal(raw, &w.Version, nil) != nil || w.Version != "2.0" {
		return nil, id, invalid(`"jsonrpc" must be "2.0"`)
	}
	if raw, ok := members["method"]; ok {
		if err := strictjson.Unmarshal(raw, &w.Method, nil); err != nil {
			return nil, id, invalid("method must be a string")
		}
	}
	if raw, ok := members["error"]; ok && string(raw) != "null" {
		var e struct {
			Code    int64          `json:"code"`
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data,omitempty"`
		}
		if err := strictjson.Unmarshal(raw, &e, nil); err != nil {
			return nil, id, invalid("error: %v", err)
		}
		w.Error = &Error{Code: e.Code, Message: e.Message, Data: json.RawMessage(e.Data)}
	}
	w.Params, w.Result = json.RawMessage(members["params"]), json.RawMessage(members["result"])
	if string(bytes.TrimSpace(w.Params)) == "null" {
		w.Params = nil
	}
	_, hasMethod := members["method"]
	_, hasResult := members["result"]
	_, hasError := members["error"]
	switch {
	case hasMethod && !hasResult && !hasError:
		if w.Method == "" {
			return nil, id, invalid("empty method")
		}
		if p := bytes.TrimSpace(w.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return nil, id, invalid("params must be an object or an array")
		}
		return &Request{ID: id, Method: w.Method, Params: w.Params}, id, nil
	case !hasMethod && hasResult != hasError:
		if hasError && w.Error == nil {
			return nil, id, invalid("error must be an object")
		}
		if hasResult && len(w.Result) == 0 {
			w.Result = json.RawMessage("null")
		}
		return &Response{ID: id, Result: w.Result, Error: w.Error}, id, nil
	}
	return nil, id, invalid("a message has either a method or one of result and error")
}

func invalid(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
}

// EncodeMessage encodes m as one JSON line body (no LF; encoding/json
// escapes control characters, so the text holds none).
func EncodeMessage(m Message) ([]byte, error) {
	w := wire{Version: "2.0"}
	switch m := m.(type) {
	case *Request:
		w.Method, w.Params = m.Method, m.Params
		if m.ID.IsValid() {
			w.ID = &m.ID
		}
	case *Response:
		id := m.ID
		w.ID = &id
		w.Error = m.Error
		if m.Error == nil {
			w.Result = m.Result
			if len(w.Result) == 0 {
				w.Result = json.RawMessage("null")
			}
		}
	default:
		return nil, fmt.Errorf("jsonrpc: unknown message type %T", m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// singleID reads the id of a top-level object whose member names may
// repeat; ok is false unless it has exactly one "id" member and it is valid.
func singleID(b []byte) (id ID, ok bool) {
	d := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return ID{}, false
	}
	n := 0
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return ID{}, false
		}
		name := tok.String() // the token is valid only until the next read
		v, err := d.ReadValue()
		if err != nil {
			return ID{}, false
		}
		if name == "id" {
			n++
			if id.UnmarshalJSON(v) != nil {
				return ID{}, false
			}
		}
	}
	if n != 1 {
		return ID{}, false
	}
	return id, true
}
