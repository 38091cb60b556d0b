// Package bridge holds the bridge Pi loads for a Go extension. It is
// written in TypeScript (index.ts, kept apart so it can be read and
// type-checked on its own) and installed as JavaScript (index.mjs,
// generated from index.ts by type stripping): Pi's loader imports an .mjs
// file natively, where a .ts file costs a jiti (Babel) transpile at the
// first start after each install and whenever jiti's cache in the temp
// folder is gone.
package bridge

import _ "embed"

//go:generate go test -run ^TestGenerated$ -update .

// Entry is the file name the bridge is installed as (Pi's pi.extensions
// entry).
const Entry = "index.mjs"

// Source is index.mjs: registers the manifest's tools, commands and hooks
// in Pi and forwards them to the Go sidecar (protocol 2).
//
//go:embed index.mjs
var Source []byte

// TypeScript is index.ts, the source index.mjs is generated from.
//
//go:embed index.ts
var TypeScript []byte
