// Package jsjson encodes JSON byte for byte as JavaScript's JSON.stringify
// does (ECMA-262 §25.5.2, the well-formed variant of Node 12+), so Go can
// reproduce files and hashes that TypeScript writes: the StateFlow canonical
// store and midcompact's messageKey (reference midcompact.md §2.2,
// stateflow.md §6.3).
//
// # What differs from encoding/json
//
//   - Strings: '"', '\\', \b \f \n \r \t escaped; other C0 controls as
//     \u00xx (lowercase hex); U+2028, U+2029, '<', '>', '&', DEL and all
//     other non-ASCII characters raw. Lone surrogates (only reachable from
//     \uD8xx escapes in JSON text) as \udxxx. Invalid UTF-8 in Go strings
//     becomes U+FFFD, one per maximal invalid subsequence, as TextDecoder.
//   - Numbers: Number.prototype.toString ([FormatNumber]): shortest
//     round-trip digits, exponent form for |x| >= 1e21 or < 1e-6 ("1e+21",
//     "1.5e-7"), -0 as "0", NaN and ±Infinity as null. JSON number text is
//     read as float64, so integers beyond 2^53 lose precision as in JS.
//   - Member order: JS object order. Integer-like keys (array indices,
//     "0" … "4294967294" in canonical form) come first in ascending numeric
//     order, the rest in insertion order; a duplicate key keeps its first
//     position and takes its last value. With [Options.SortKeys] every
//     object's keys are sorted by UTF-16 code units, as JS's default sort()
//     (this differs from Go's byte order for astral versus U+E000–U+FFFF
//     characters).
//
// # Use
//
//	b, err := jsjson.Reencode(line, &jsjson.Options{SortKeys: true})
//	// b == JSON.stringify(sortKeysDeep(JSON.parse(line)))
//
// [JS] is the one options value for JSON.stringify's output of decoded
// values (lone surrogates as \udxxx), and [Object] writes an object member
// by member in a given order, as a JS object literal is stringified.
// Untrusted JSON is decoded by internal/strictjson, not here.
//
// # Tests against Node
//
// Golden vectors in testdata/golden.json are written by the test Node
// (testdata/jsjson.js gen, run by go test -run TestGolden -update or go
// generate) and compared byte for byte without Node. When the test Node is
// installed, TestReencode_RealNodeDifferential runs random texts, Go values
// and float64 bit patterns through one long-lived `jsjson.js serve` process,
// and FuzzReencode_Differential asks it about every fuzzed input.
package jsjson
