//go:build unix

package platform

import "os"

// ChildPipe returns a pipe between this process and a child it starts:
// parent is this process's end, child the end to set as the child's
// cmd.Stdin (childReads) or cmd.Stdout or cmd.Stderr; close child once the
// child started. parent supports deadlines (SetReadDeadline,
// SetWriteDeadline), and its Close unblocks a Read or Write pending on it.
// Unix: os.Pipe, whose ends are non-blocking and polled. Windows: a named
// pipe (see the Windows file).
func ChildPipe(childReads bool) (parent, child *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if childReads {
		return w, r, nil
	}
	return r, w, nil
}
