//go:build pitaskbar

package client

import "io/fs"

// Embedded reports whether the assets are compiled in (the pitaskbar build
// tag is set).
const Embedded = true

// FS returns the Browser Client assets: [ScriptName] and [StyleName] at the
// root. Serve them at <mount>/assets/<name> with Cache-Control: no-store.
// The returned FS is read-only and safe for concurrent use.
func FS() fs.FS { return devAssets }
