// registry.mjs runs Verdaccio (internal/pitest Registry) on a free loopback
// port: node registry.mjs <verdaccio install dir> <config.yaml>. It prints
// "LISTEN <port>" once the server listens and stops when stdin ends.
import { createRequire } from "node:module";

const [, , dir, config] = process.argv;
const { runServer } = createRequire(dir + "/package.json")("verdaccio");
const app = await runServer(config);
const srv = app.listen(0, "127.0.0.1", () => process.stdout.write("LISTEN " + srv.address().port + "\n"));
process.stdin.on("end", () => {
  srv.closeAllConnections?.();
  srv.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
});
process.stdin.resume();
