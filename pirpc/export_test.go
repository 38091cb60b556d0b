package pirpc

// PortableExitWatch returns opts set to learn of Pi's exit with the
// portable exit watch (platform.WatchExitReaping, what macOS uses) instead
// of the OS's native one, so the Linux run covers it.
func PortableExitWatch(opts Options) Options {
	opts.portableExitWatch = true
	return opts
}
