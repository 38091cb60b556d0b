// Package pimessage is pikit's one model of Pi's data (reference
// pi-rpc-and-extensions.md §1.5 AgentMessage, §4 session entries): a
// [Message] (one AgentMessage), an [Entry] (one session entry) and the parts
// of a message's content, each kept as opaque JSON with typed accessors, so
// fields a newer Pi adds survive a round trip.
//
// It is the one place that knows Pi's roles ([RoleUser], [RoleAssistant],
// …), content kinds ([KindText], [KindImage], [KindThinking],
// [KindToolCall]) and entry types ([TypeMessage], …), and the one text join
// ([Text]). pirpc, piext, internal/pisession, midcompact and the scripted
// model server build on it; midcompact adds its JavaScript-coercion view on
// top.
//
// # How members are read
//
// Accessors read a top-level member as JSON.parse does: names compare
// exactly, a repeated name counts with its last value, and a member of
// another JSON type than the accessor's reads as the zero value (a role that
// is a number is ""). Invalid UTF-8 and lone surrogate escapes in strings
// read as U+FFFD. Reading stops at a syntax error; members before it count.
// Accessors never fail and never panic.
//
// Text is read strictly, with internal/strictjson's policy: a repeated
// member name is refused, not resolved. [Text] (and [Message.Text]) joins to
// "" when any part of the content repeats a member name, at any depth, and
// [Part.Text] is "" for such a part, so no reader of pikit takes a text that
// another reader (JSON.parse keeps the last, a type sniffer often the first)
// would not. Roles, kinds, ids and other single members keep JSON.parse's
// view, which is what Pi itself routes on.
//
// A value built by [NewMessage], [NewEntry], [Parts], [Entry.Message] or
// decoding scans Raw once, on its first accessor call, and its copies share
// that scan; later calls look the member up among the ones found. A value
// written as a literal (Message{Raw: raw}) has no place to keep the scan and
// scans Raw on every call, as [Lookup] does.
//
// # Example
//
//	m := pimessage.NewMessage(raw)
//	if m.Role() == pimessage.RoleUser {
//		fmt.Println(m.Text()) // the joined text parts
//	}
package pimessage
