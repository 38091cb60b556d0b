package client_test

import (
	"io/fs"

	"github.com/pikit-dev/pikit/taskbar/client"
)

func fsReadDir() ([]string, error) {
	entries, err := fs.ReadDir(client.FS(), ".")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}
