package release

// Extension is one built-in Go extension published as a Pi package
// <scope>/<Name>.
type Extension struct {
	// Name is the built-in extension (`pikit ext run NAME`) and the npm
	// package's name within the scope.
	Name string
	// Title names it in the package's README.md.
	Title string
	// Description is the npm description.
	Description string
	// Changelog is the module-relative path of the CHANGELOG.md shipped in
	// the package (Pi shows its entries after an update).
	Changelog string
	// Exports are the package's subpath exports besides ./package.json,
	// e.g. "./modules": "./modules.ts".
	Exports map[string]string
}

// Extensions is the one table of Pi packages the release publishes: a new
// extension is one row.
func Extensions() []Extension {
	return []Extension{
		{
			Name: "midcompact", Title: "midcompact",
			Description: "Planned mid-conversation compaction for the Pi coding agent (pikit, Go sidecar)",
			Changelog:   "midcompact/CHANGELOG.md",
		},
		{
			Name: "stateflow", Title: "StateFlow",
			Description: "Durable scoped memory for the Pi coding agent: patch_state/read_state, Global, CWD and Session planes (pikit, Go sidecar)",
			Changelog:   "stateflow/CHANGELOG.md",
			Exports:     map[string]string{"./modules": "./modules.ts"},
		},
		{
			Name: "live", Title: "live",
			Description: "Riffrec live sessions inside the Pi coding agent: page batches arrive as work, unit status flows back (pikit, Go sidecar)",
			Changelog:   "live/extension/CHANGELOG.md",
		},
	}
}
