// Package contract is the taskbar's conformance contract v1 (seed 000
// "Initial task request", "Normalized browser context", "Prompt envelope",
// "Fixture manifest"; facts in reference §2–5, §9, §16): it normalizes and
// validates what the browser sends, and builds the exact bytes that reach Pi.
//
// # Pipeline
//
// [ParseTask] takes a raw POST /tasks body through these steps, first failure
// wins:
//
//  1. more than [MaxRequestBytes] (131,072) bytes: oversized_payload, 413;
//  2. invalid UTF-8, invalid JSON, trailing data, or not an object:
//     malformed_json, 400;
//  3. duplicate member names at any level: invalid_task, 422;
//  4. normalization (reference §3 steps 1–5): CRLF/CR to LF, controls and
//     bidi overrides stripped, NFC, every context string whitespace-collapsed
//     and trimmed, tags, enums and truncation fields lower-cased, the route
//     method upper-cased, empty optional fields removed, truncation records
//     and reasons in canonical order; the prompt only gets step 1 and a trim;
//  5. validation against the task-request and browser-context schemas,
//     including the x-* keywords (x-maxUtf8Bytes, x-maxJsonUtf8Bytes,
//     x-maxNodes, x-maxDepth, x-uniqueBy, x-httpOrigin, x-projectPath,
//     x-sourceHint), and two adapter rules: numbers are integer literals
//     (contract_version 1.0 is rejected) and truncation sections are unique.
//     Any failure is invalid_task, 422.
//
// Every failure is an *[Error]. Its Code, Status and Message are fixed and
// safe for a browser; its Reason is a one-line detail that may quote input and
// is meant for the CLI and conformance checks only.
//
// # Schemas
//
// The schema files are the only source of the bounds. Copies of the upstream
// files (MIT, schemas/LICENSE) are embedded, so the binary works alone; a
// test keeps them byte-identical to ../shared/taskbar-contract/schemas.
// [NewValidator] compiles any directory of schemas, which is how [Verify]
// checks a newer contract without code changes.
//
// Validation has two tiers over the same compiled schemas
// (santhosh-tekuri/jsonschema/v6). A fast path reads the compiled keywords
// and bounds and walks a document once, without allocating, measuring every
// value's compact JSON size on the way for the nested x-maxJsonUtf8Bytes
// bounds; it can only accept. Whatever it does not accept, or cannot decide
// exactly as the library would (a non-integer number, a non-string enum or
// uniqueness key), goes to the library, which gives the verdict and the error
// text. A schema that uses a keyword the fast path does not know turns it off,
// so a newer contract is still judged by the library alone. Tests and a fuzz
// target check that both tiers reach the same outcome.
//
// # Envelope
//
// [Task.Envelope] is the prompt message for Pi (reference §5): the prompt,
// a blank line, the BEGIN delimiter, the context as canonical JSON (sorted
// keys, compact, non-ASCII raw, '<' '>' '&' as \u003c \u003e \u0026) and
// the END delimiter, with no trailing newline.
//
// # Concurrency
//
// A [Validator] is immutable after construction and safe for concurrent use;
// the package functions share one built lazily from the embedded schemas.
// [Task] and [Context] values are immutable.
//
// # Example
//
//	t, err := contract.ParseTask(body)
//	if err != nil {
//		var e *contract.Error
//		errors.As(err, &e) // e.Status, e.Code, e.Message go to the browser
//		return
//	}
//	message := t.Envelope() // the "message" of Pi's prompt command
package contract
