// Package bridge holds the TypeScript bridge Pi loads for a Go extension
// (index.ts, embedded). It is kept apart so the TypeScript can be read and
// type-checked on its own.
package bridge

import _ "embed"

// Source is index.ts: registers the manifest's tools, commands and hooks in
// Pi and forwards them to the Go sidecar (protocol 2).
//
//go:embed index.ts
var Source []byte
