package extension

import (
	"embed"
	"io/fs"
)

//go:embed skills
var skillsDir embed.FS

// skills is the `midcompact` skill the start prompt and the handoff message
// tell the model to read; install copies it next to the bridge.
func skills() fs.FS {
	sub, err := fs.Sub(skillsDir, "skills")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}
