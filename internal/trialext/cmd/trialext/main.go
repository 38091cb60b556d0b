// Command trialext is the trial extension's sidecar:
//
//	go build -o trialext . && pikit ext install trial --exec ./trialext
package main

import (
	"os"

	"github.com/pikit-dev/pikit/internal/trialext"
	"github.com/pikit-dev/pikit/piext"
)

func main() { piext.Main(trialext.New(os.Stderr).Extension()) }
