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
// Pi's messages, session entries and session files are read through
// internal/pimessage's accessors and internal/pisession, which read
// members as Pi's JSON.parse does (names exact, the last of a repeated
// name); pimessage reads text strictly, with this package's policy.
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
//     decode untrusted input into a struct: it matches names
//     case-insensitively ("TOOLNAME" is toolName, "ſuccess" is success)
//     and keeps the last of duplicate names.
//   - live calls github.com/go-json-experiment/json directly: its defaults
//     are this package's rules (names exact, duplicates and invalid UTF-8
//     refused); its untrusted input goes through [Unmarshal] for the bounds
//     and typed errors.
//
// # Choosing the decoder at a decode site
//
// Every json.Unmarshal or json.NewDecoder outside tests and test tools is
// one of three kinds; a new site picks its kind and keeps to it.
//
//  1. Untrusted input decoded into a Go struct goes through [Unmarshal]
//     (or pimessage's accessors and pisession for Pi's messages, entries
//     and session files). Untrusted is anything pikit did not write
//     itself: what Pi sends (hook payloads, answers of pi.* calls such as
//     getContextUsage, getCommands, getHeader, custom entries' data), tool
//     arguments and anything else a model writes (an inspect cursor), a
//     companion module's answers, a JSON-RPC peer's params and results,
//     HTTP bodies and upstream answers, and files a user or Pi can edit.
//  2. Our own bytes may stay with encoding/json: a file or frame our code
//     wrote and reads back (a task record, a runtime snapshot, a board
//     clone), our own embedded schema, an extension author's schema, or a
//     second decode of bytes [Unmarshal] already accepted. A short comment
//     says so where the origin is not plain from the code.
//  3. A decode that matches no member names (into a string, a number,
//     []json.RawMessage, map[string]json.RawMessage or a token stream
//     whose names the caller compares exactly) has no case differential:
//     encoding/json there reads what JSON.parse reads (the last of a
//     repeated key). midcompact's JavaScript-coercion view, splitting Pi's
//     arrays into raw elements and StateFlow's order-keeping edit of Pi's
//     system messages are of this kind; values that must round-trip as
//     JavaScript writes them go through internal/jsjson instead.
package strictjson
