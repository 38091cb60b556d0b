//go:build unix

package platform

// Wine returns the version of Wine a Windows binary runs under, or "" on
// Windows itself; on Unix always "".
func Wine() string { return "" }
