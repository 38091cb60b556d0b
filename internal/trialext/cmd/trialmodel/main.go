// Command trialmodel serves trialext.Script on a loopback port and writes
// a models.json for it (provider "fake", model "fake-model") into the agent
// dir given as its argument, for a manual interactive Pi run.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/trialext"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "trialmodel:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: trialmodel AGENT_DIR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/v1"
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": url, "api": "openai-completions", "apiKey": "fake-key",
		"models": []any{map[string]any{"id": "fake-model", "name": "Fake Model", "contextWindow": 32000, "maxTokens": 1024,
			"cost": map[string]int{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}},
	}}}
	b, err := json.MarshalIndent(models, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(os.Args[1], "models.json"), b, 0o600); err != nil {
		return err
	}
	fmt.Println(url)
	srv := modelserver.New(trialext.Script)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	return hs.Serve(ln)
}
