// Command exampleapp serves the example app the way a Go application
// integrates the taskbar: pages on a ServeMux, [host.Mount] for the API and
// assets, [host.Taskbar.Middleware] for the bootstrap. Built with
// `-tags pitaskbar` it has the taskbar and runs the `pi` on PATH (or
// PI_BROWSER_TASKBAR_EXECUTABLE) with your own provider; built without the
// tag it is the plain app.
//
// Pi lives in the project broker, which this binary serves itself: main
// calls [broker.Dispatch] first, and Mount is told so (SelfBroker). A
// restart of the app (hot reload) keeps Pi, the conversation and a running
// task; the broker exits 300 s after the last app process went away.
//
//	go run -tags pitaskbar ./examples/app/cmd/exampleapp -dir examples/app
//
// `pikit demo` does the same and also installs Pi and offers an offline
// demo model.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pikit-dev/pikit/examples/app"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/host"
)

func main() {
	// `exampleapp taskbar broker …` is the project broker Mount spawns.
	if ran, err := broker.Dispatch(context.Background(), os.Args[1:], os.Getenv); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, "exampleapp:", err)
			os.Exit(2)
		}
		return
	}
	dir := flag.String("dir", ".", "the example app directory (holding templates/); also Pi's project root")
	addr := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dir, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "exampleapp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, addr string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	mux := http.NewServeMux()
	mux.Handle("/", app.New(os.DirFS(dir), &app.Options{Logger: log}))
	tb, err := host.Mount(ctx, mux, &host.Options{Config: taskbar.Config{ProjectRoot: dir}, Logger: log, SelfBroker: true})
	if err != nil {
		return err
	}
	defer tb.Close(context.Background())
	// Every timeout set: a development server is still a server, and a
	// client that stalls must not hold a connection forever. None of these
	// pages streams; an app with server-sent events or WebSockets would
	// lift the deadlines per request (http.ResponseController) instead of
	// setting ReadTimeout and WriteTimeout here.
	srv := &http.Server{
		Addr:              addr,
		Handler:           tb.Middleware(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("serving http://%s/ (taskbar compiled in: %v)\n", ln.Addr(), host.Enabled)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
