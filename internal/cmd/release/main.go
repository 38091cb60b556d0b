// Command release builds pikit for every target and writes, packs and
// sums its npm packages (internal/release). Run it from the module:
//
//	go run ./internal/cmd/release --version 0.1.0
//
// It stamps the commit of HEAD and refuses a modified tree unless
// --allow-dirty; the output goes to dist/VERSION. Then publish each
// tarball with npm publish, per-platform packages first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", strings.TrimPrefix(err.Error(), "release: "))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	version := fs.String("version", "", "release version, semver without v (required)")
	out := fs.String("out", "", "output directory, missing or empty (default dist/VERSION)")
	scope := fs.String("scope", release.DefaultScope, "npm scope of every package")
	targets := fs.String("targets", "", "comma-separated GOOS/GOARCH list (default: all five)")
	skip := fs.Bool("skip-broken", false, "report and skip a target that does not compile (default: fail)")
	dirty := fs.Bool("allow-dirty", false, "release a modified tree (the commit gets no -dirty mark)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	root, err := modroot.Find(".")
	if err != nil {
		return err
	}
	commit, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if status, err := git(ctx, root, "status", "--porcelain", "--untracked-files=no"); err != nil {
		return err
	} else if status != "" && !*dirty {
		return errors.New("the tree has changes; commit them, or pass --allow-dirty")
	}
	o := release.Options{Version: *version, Commit: commit, Module: root, Out: *out, Scope: *scope, SkipBroken: *skip, Log: os.Stderr}
	if o.Out == "" {
		o.Out = filepath.Join(root, "dist", *version)
	}
	if *targets != "" {
		for _, s := range strings.Split(*targets, ",") {
			t, ok := release.ParseTarget(strings.TrimSpace(s))
			if !ok {
				return fmt.Errorf("--targets: %q is not GOOS/GOARCH", s)
			}
			o.Targets = append(o.Targets, t)
		}
	}
	res, err := release.Run(ctx, o)
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(os.Stderr, "skipped %s (does not compile)\n", s.Target)
	}
	for _, tb := range res.Tarballs {
		fmt.Printf("%s  %s\n", tb.SHA256, filepath.Base(tb.File))
	}
	fmt.Fprintf(os.Stderr, "wrote %d tarballs and %s\n", len(res.Tarballs), res.SumsFile)
	return nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
