// Package taskbar serves the Pi browser taskbar API for a Go host in
// development: configuration, the access and CSRF checks, and the HTTP
// handler in front of the project's Pi owner (seed 000).
//
// # Configuration
//
// [Config] holds the five settings; [Config.Resolve] applies Config >
// PI_BROWSER_TASKBAR_* environment > defaults and returns canonical
// [Settings] or a [*ConfigError] naming the malformed setting. Settings
// are fixed at startup and never exposed to the browser.
//
// # Handler
//
// [NewHandler] serves GET /state, POST /tasks, DELETE /tasks/{id}, POST
// /session/reset and GET /assets/{file} below a mount base, in front of an
// [Owner]: the project broker client in a host, [InProcess] for tests.
// Every request passes the access check (r.Host and r.RemoteAddr only),
// every mutation the CSRF check; [Handler.CSRFToken] gives the token for
// the page bootstrap.
//
//	settings, err := taskbar.Config{}.Resolve(os.LookupEnv)
//	if err != nil { return err }
//	client := broker.NewClient(&broker.ClientOptions{ProjectRoot: settings.ProjectRoot,
//		Executable: settings.Executable, TaskTimeout: settings.TaskTimeout, Getenv: os.Getenv})
//	defer client.Close()
//	h := taskbar.NewHandler(client, &taskbar.Options{AllowedHosts: settings.AllowedHosts, Assets: assets})
//	mux.Handle(h.MountBase()+"/", h)
//
// # Logging
//
// Only route patterns, statuses, stable codes and fixed lifecycle messages
// are logged; never prompts, context, commands, environment, paths, hosts
// or raw Pi records.
package taskbar
