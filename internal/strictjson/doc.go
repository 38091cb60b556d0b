// Package strictjson is the one decoder for untrusted JSON: Pi's stdout
// (pirpc), JSON-RPC messages (internal/jsonrpc), extension parameters and
// everything else the piext bridge sends, the taskbar broker's protocol,
// and live's HTTP bodies and logs.
//
// StateFlow's store decodes meta.json and runtime.json through it too
// (with AllowInvalidUTF8, reading kept strings and values as JSON.parse
// does through internal/jsjson), so a repeated member name refuses such a
// file although JSON.parse would keep the last.
//
// Two readers of untrusted JSON keep their own decoder on purpose:
// taskbar/contract builds the json.Number tree its JSON Schema validation
// needs (it refuses duplicates and bounds size and depth itself), and
// StateFlow reads semantic values (checkpoint.json, patches.jsonl lines,
// tool arguments) as JSON.parse does (stateflow.DecodeValue: duplicate
// names last-wins, lone surrogates kept), since they are data the
// TypeScript extension writes and reads the same way, not messages.
//
// # Policy
//
// [Unmarshal] decodes one JSON text into a Go value with one policy:
//
//   - member names match struct fields exactly (encoding/json also takes
//     "ID", "Type" or "ſuccess" for "success": a parser differential, as in
//     CVE-2026-27896);
//   - a duplicate member name in any object is an error (JSON.parse keeps
//     the last value, encoding/json too, a type sniffer often the first);
//   - invalid UTF-8 is an error unless [Policy.AllowInvalidUTF8];
//   - the text is at most [Policy.MaxBytes] long and nests at most
//     [Policy.MaxDepth] levels;
//   - unknown members are ignored unless [Policy.RejectUnknownMembers];
//   - anything after the one JSON value other than whitespace is an error.
//
// Every failure is an *[Error] whose Kind ([ErrSyntax], [ErrDuplicateName],
// [ErrType], [ErrUnknownMember], [ErrTooLarge], [ErrTooDeep]) callers map
// to their own stable wire codes with errors.Is; Offset is the byte where
// the decoder stopped. The error wraps the go-json-experiment error, so its
// text and details stay reachable.
//
// # Which JSON library does what
//
//   - github.com/go-json-experiment/json (json v2) decodes untrusted input,
//     through this package: it matches names case-sensitively and refuses
//     duplicate names by default, and reports typed errors with offsets.
//     Raw values it keeps are jsontext.Value (a []byte field would be read
//     as base64).
//   - internal/jsjson writes (and reads back) JSON byte for byte as
//     JavaScript's JSON.stringify/JSON.parse do, for text that must equal
//     what Pi or a TypeScript extension writes (hashes, canonical files,
//     JSON.stringify-shaped replies): number formatting, key order, lone
//     surrogates. [jsjson.Object] writes ordered objects.
//   - encoding/json encodes our own trusted values where the bytes need not
//     match JavaScript (records, replies), and is used on trusted input
//     (our own files written by our own code, test fixtures). It must not
//     decode untrusted input: it matches names case-insensitively and keeps
//     the last of duplicate names.
package strictjson
