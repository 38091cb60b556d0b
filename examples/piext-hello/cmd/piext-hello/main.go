// Command piext-hello is the hello extension as its own program: `pikit ext install hello --exec PATH`.
package main

import (
	hello "github.com/pikit-dev/pikit/examples/piext-hello"
	"github.com/pikit-dev/pikit/piext"
)

func main() { piext.Main(hello.New()) }
