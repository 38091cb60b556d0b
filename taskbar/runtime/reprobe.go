package runtime

import (
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ReprobeInterval is how often a runtime whose Pi executable was not found
// looks for it again.
const ReprobeInterval = 2 * time.Second

// NoModelReprobeInterval is how often a runtime whose Pi reported no
// usable model starts Pi again to see whether one was configured (one
// short-lived Pi process per interval).
const NoModelReprobeInterval = 30 * time.Second

// awaitExecutable replaces idle for a session that is unavailable because
// the Pi executable was not found ("Pi executable was not found", which
// upstream never leaves): every ReprobeInterval it resolves the executable again, with
// exec.LookPath as the spawn would, and reports true once it resolves, the
// session back to starting, so the supervisor runs a normal startup. So
// installing Pi while the app runs makes the taskbar Ready without a
// restart. The re-probe is bounded: one PATH lookup per interval and no
// process until the executable exists; every other unavailable cause (a Pi
// that exists but fails to start or keeps crashing) stays unavailable as
// before, since retrying it would spawn processes forever. A Pi that
// reported no usable model ([SessionNoModelMessage]) is started again every
// [NoModelReprobeInterval] instead, so configuring a provider makes the
// taskbar Ready within that time. It reports false when the runtime
// closes.
func (r *Runtime) awaitExecutable() bool {
	r.mu.Lock()
	missing := r.phase == SessionUnavailable && r.sessionErr != nil && *r.sessionErr == sesNotFound
	noModel := r.phase == SessionUnavailable && r.sessionErr != nil && *r.sessionErr == SessionNoModelMessage
	r.mu.Unlock()
	if !missing && !noModel {
		r.idle()
		return false
	}
	interval := ReprobeInterval
	if noModel {
		interval = NoModelReprobeInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			r.markStopped()
			return false
		case reply := <-r.resetCh:
			reply <- ResultUnavailable
		case <-t.C:
			if missing && !r.executableFound() {
				continue
			}
			r.mu.Lock()
			r.phase = SessionStarting
			r.sessionErr = nil
			r.commitLocked()
			r.mu.Unlock()
			r.log.Info("taskbar runtime: looking for Pi or its model again; starting Pi")
			return true
		}
	}
}

// executableFound resolves the executable like the spawn does: a bare name
// on PATH, a relative path from the working directory Pi gets.
func (r *Runtime) executableFound() bool {
	exe := r.o.Executable
	if strings.ContainsRune(exe, filepath.Separator) && !filepath.IsAbs(exe) && r.o.Dir != "" {
		exe = filepath.Join(r.o.Dir, exe)
	}
	_, err := exec.LookPath(exe)
	return err == nil
}
