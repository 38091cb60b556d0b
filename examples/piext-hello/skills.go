package hello

import (
	"embed"
	"io/fs"
)

//go:embed skills
var skillsDir embed.FS

// Skills is the extension's skill folders (hello-greeting/SKILL.md); Pi
// finds them through the bridge's resources_discover.
func Skills() fs.FS {
	sub, err := fs.Sub(skillsDir, "skills")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}
