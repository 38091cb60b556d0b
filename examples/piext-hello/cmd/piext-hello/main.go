// Command piext-hello is the hello extension as a program of its own:
// `pikit ext install hello --exec $(which piext-hello)`.
package main

import (
	hello "github.com/pikit-dev/pikit/examples/piext-hello"
	"github.com/pikit-dev/pikit/piext"
)

func main() { piext.Main(hello.New()) }
