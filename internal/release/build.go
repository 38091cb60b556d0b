package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// build compiles ./cmd/pikit of o.Module for t into exe (see the package
// doc, "Reproducible builds"). A failure is [ErrBuild] with the end of the
// compiler's output.
func build(ctx context.Context, o Options, t Target, exe string) error {
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", o.Version, o.Commit)}
	if o.Rebuild {
		args = append(args, "-a")
	}
	args = append(args, "-o", exe, "./cmd/pikit")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH,
		"GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s: %v\n%s", ErrBuild, t, err, tail(out.String(), 20))
	}
	return nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
