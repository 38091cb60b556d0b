package midcompact

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pimessage"
)

// fnv1a64 offset basis and prime (reference §2.2).
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// MessageKey returns the message's key, `role:timestamp:fnv1a64`, as the
// upstream computes it (reference §2.2): role as JS String(role) ("undefined"
// when absent), the timestamp when it is a JSON number (as
// Number.prototype.toString) else 0, and the FNV-1a 64 hash (16 lower-case
// hex digits) of the UTF-8 bytes of JSON.stringify of the message with object
// keys sorted recursively by UTF-16 code units. Keys decide which entries
// back an atom and which messages a block replaces (seed 001 §Projection), so
// they must be byte-equal to Node's; internal/jsjson supplies that encoding.
// It fails only when m.Raw is not JSON text.
func MessageKey(m *Message) (string, error) {
	canon, err := stableStringify(m.Raw)
	if err != nil {
		return "", fmt.Errorf("message key: %w", err)
	}
	ts := "0"
	if m.HasTimestamp {
		ts = jsjson.FormatNumber(m.Timestamp)
	}
	return fmt.Sprintf("%s:%s:%016x", m.keyRole, ts, fnv1a64(canon)), nil
}

// stableStringify is JSON.stringify(sortKeysDeep(JSON.parse(raw))) where
// sortKeysDeep rebuilds every object with its keys in sort() order. A JS
// object still lists integer-like keys ("2", "10") first, ascending:
// [jsjson.Options.IndexKeysFirst].
func stableStringify(raw []byte) ([]byte, error) {
	return jsjson.Reencode(raw, &jsjson.Options{SortKeys: true, IndexKeysFirst: true})
}

func fnv1a64(b []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

// jsString is JavaScript String(v) for a JSON member value (absent is
// undefined). Arrays and objects, which no Pi message role takes, read as
// their elements joined by "," (null as empty) / "[object Object]".
func jsString(v json.RawMessage) string {
	switch pimessage.FirstByte(v) {
	case 0:
		return "undefined"
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	case 'n':
		return "null"
	case 't':
		return "true"
	case 'f':
		return "false"
	case '{':
		return "[object Object]"
	case '[':
		// Array.prototype.join(","): null elements are empty.
		var elems []json.RawMessage
		_ = json.Unmarshal(v, &elems)
		parts := make([]string, len(elems))
		for i, e := range elems {
			if pimessage.FirstByte(e) != 'n' {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	}
	var f float64
	if json.Unmarshal(v, &f) != nil {
		return "Infinity"
	}
	return jsjson.FormatNumber(f)
}
