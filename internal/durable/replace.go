package durable

import (
	"fmt"
	"os"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// The bounded backoff of a rename the OS reports busy: the first retry
// waits renameFirstDelay, each next one twice as long up to renameMaxDelay,
// and retries stop once renameBudget was spent waiting (about 2 s, 15
// tries).
const (
	renameFirstDelay = time.Millisecond
	renameMaxDelay   = 250 * time.Millisecond
	renameBudget     = 2 * time.Second
)

// renamer renames with a bounded retry while the target is busy. On
// Windows a rename over a file another process holds open fails with
// ERROR_ACCESS_DENIED or ERROR_SHARING_VIOLATION until the holder closes it
// (a reader, a virus scanner, an indexer); on Unix it never does, so there
// the first answer stands. The zero value uses os.Rename,
// platform.IsRenameBusy and time.Sleep; tests replace them.
type renamer struct {
	rename func(oldpath, newpath string) error
	busy   func(error) bool
	sleep  func(time.Duration)
}

// do renames oldpath to newpath. When every try found the target busy, the
// error says how many tries were made and wraps the last one.
func (r renamer) do(oldpath, newpath string) error {
	rename, busy, sleep := r.rename, r.busy, r.sleep
	if rename == nil {
		rename = os.Rename
	}
	if busy == nil {
		busy = platform.IsRenameBusy
	}
	if sleep == nil {
		sleep = time.Sleep
	}
	delay, waited := renameFirstDelay, time.Duration(0)
	for tries := 1; ; tries++ {
		err := rename(oldpath, newpath)
		if err == nil || !busy(err) {
			return err
		}
		if waited >= renameBudget {
			return &busyError{tries: tries, err: err}
		}
		sleep(delay)
		waited += delay
		delay = min(2*delay, renameMaxDelay)
	}
}

// busyError is a rename that found its target busy on every try.
type busyError struct {
	tries int
	err   error
}

func (e *busyError) Error() string {
	return fmt.Sprintf("in use by another process after %d tries: %v", e.tries, e.err)
}

func (e *busyError) Unwrap() error { return e.err }
