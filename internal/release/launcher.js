#!/usr/bin/env node
// pikit's npm launcher (the CLI package's bin): runs the pikit binary of the
// per-platform package for this machine, an optionalDependency of this
// package that npm installs for its os and cpu alone. No postinstall, no
// download. Written by pikit's release (internal/release); do not edit.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const BINARY = "__PIKIT_BINARY__"; // <package>/<path>, {platform} = platform-arch
const platform = `${process.platform}-${process.arch}`;
const spec = BINARY.split("{platform}").join(platform);
const cut = spec.indexOf("/", spec.startsWith("@") ? spec.indexOf("/") + 1 : 0);
const pkg = spec.slice(0, cut);
const rel = spec.slice(cut + 1) + (process.platform === "win32" ? ".exe" : "");
const version = require("../package.json").version;

let exe;
try {
  exe = path.join(path.dirname(require.resolve(pkg + "/package.json")), rel);
} catch {
  process.stderr.write(
    `pikit: no binary for ${platform}: the npm package ${pkg} is not installed (not published for this platform, ` +
      `or npm skipped optional dependencies). Build it from source with Go 1.26: ` +
      `go install github.com/pikit-dev/pikit/cmd/pikit@v${version}\n`,
  );
  process.exit(1);
}

const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
const forward = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const sig of forward) process.on(sig, () => child.kill(sig));
child.on("error", (e) => {
  process.stderr.write(`pikit: cannot run ${pkg}/${rel}: ${e.code || e.message}\n`);
  process.exit(1);
});
child.on("exit", (code, sig) => {
  if (sig) {
    for (const s of forward) process.removeAllListeners(s);
    process.kill(process.pid, sig);
    return;
  }
  process.exit(code ?? 1);
});
