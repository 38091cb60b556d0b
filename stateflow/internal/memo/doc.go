// Package memo holds StateFlow's performance caches: the containers, their
// bounds and their locking, keyed by map identity. Package stateflow owns
// what the entries mean (a view's fingerprint, which states a re-decoded
// view may inherit, how a head or a record is encoded) and is the only
// importer; nothing here is StateFlow API. Every result is the same with
// or without a cache: the caches only skip work.
//
// Identity keys rely on StateFlow's rule that maps reachable from a view
// are never modified in place. Each entry holds its map, so the address
// is not reused while the entry lives.
//
// # Files
//
//   - cache.go: [Cache], what reads derive from one temporal view (scope
//     states per tail position, overlays per offset, read_state result
//     texts, the Active head's encoded members, the encoding memos);
//   - enc.go: [Enc], a jsjson.Memo of large plane encodings; [Clean], the
//     planes known to hold no empty object; [Records], the encoded records
//     of recent_transitions; [SameMap];
//   - segments.go: [Segments] and [EncodeSegments], an object written as
//     segments so memoized plane encodings are shared, not copied.
package memo
