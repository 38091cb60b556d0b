package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// pack runs npm pack on dir into out and hashes the tarball.
func pack(ctx context.Context, dir, out string) (Tarball, error) {
	cmd := exec.CommandContext(ctx, "npm", "pack", "--json", "--pack-destination", out, dir)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_loglevel=error", "npm_config_fund=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Tarball{}, fmt.Errorf("release: npm pack %s: %v\n%s", filepath.Base(dir), err, stderr.String())
	}
	var info []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || len(info) != 1 || info[0].Filename == "" {
		return Tarball{}, fmt.Errorf("release: npm pack %s: unexpected output %q", filepath.Base(dir), stdout.String())
	}
	file := filepath.Join(out, filepath.Base(info[0].Filename))
	sum, size, err := sha256File(file)
	if err != nil {
		return Tarball{}, err
	}
	return Tarball{File: file, Size: size, SHA256: sum}, nil
}

func sha256File(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
