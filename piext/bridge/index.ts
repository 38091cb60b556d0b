// pikit piext bridge: loads a Go extension into Pi (protocol 2).
//
// Pi loads this file, as index.mjs with its types stripped (a native import,
// no jiti transpile), from an installed folder pikit-NAME/ that
// also holds piext.json = {protocol, command, manifest}. The factory
// registers the manifest's tools, commands and hooks and starts the Go
// sidecar without waiting for it (its start overlaps Pi's own start-up);
// the sidecar speaks JSON-RPC 2.0 over its stdin/stdout (one JSON object
// per line) and is kept for the whole Pi process on globalThis (a /reload
// re-runs this module).
// Written by pikit; do not edit: `pikit ext install NAME` rewrites it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PROTOCOL = 2;
const HOOK_TIMEOUT_MS = 5000;
const WARM_TIMEOUT_MS = 30000;
// The context warm-up waits until no hook has run for WARM_QUIET_MS after
// session_start: a prompt given at once (print mode, RPC) is not kept
// behind it (its first context call sends in full instead), an idle
// session is warmed before its user's first prompt.
const WARM_QUIET_MS = 1000;
// A sidecar start: initialize must answer within INIT_TIMEOUT_MS, doubled
// after each failed start in a row (up to INIT_TIMEOUT_MAX_MS), so a slow
// start is never a permanent failure. A failed start stops the child. The
// next call starts a new one; after two or more failures in a row, not
// before a backoff of START_BACKOFF_MS, doubled per further failure up to
// START_BACKOFF_MAX_MS: calls within it fail at once.
const INIT_TIMEOUT_MS = 5000;
const INIT_TIMEOUT_MAX_MS = 60000;
const START_BACKOFF_MS = 500;
const START_BACKOFF_MAX_MS = 30000;
// Stopping a sidecar: stdin is closed (a piext sidecar exits within 3 s of
// that), SIGTERM follows after the grace, SIGKILL KILL_AFTER_MS later.
const STOP_GRACE_MS = 3000;
const KILL_AFTER_MS = 2000;
// A broken pipe waits this long for the exit that explains it.
const PIPE_EXIT_WAIT_MS = 250;
// Lines on the sidecar's stdout that are not JSON-RPC (a library printing
// before piext.Main took stdout): the first NOISE_LOGGED of a sidecar's
// life are logged by size, never content; the rest are counted.
const NOISE_LOGGED = 5;
// One message (one line, without its LF) is at most MAX_MESSAGE_BYTES bytes
// of UTF-8 in each direction, the cap the Go side enforces too. It is
// counted on bytes before any string is built: a longer line from the
// sidecar is skipped unread but for its first HEAD_BYTES, which name its id.
// An oversized answer fails its call, naming the limit (a tool's result is
// then an error, a hook fails open or closed as declared); an oversized
// request from the sidecar is answered by its id. A message the bridge
// would send over the cap fails its call (or is answered with the error).
const MAX_MESSAGE_BYTES = 128 << 20;
const HEAD_BYTES = 256;
const CODE = {
  staleSession: -32011,
  staleContext: -32012,
  notAllowed: -32013,
  unavailable: -32014,
  unknownMessage: -32015,
  notSynchronous: -32016,
  methodNotFound: -32601,
  internal: -32603,
  cancelled: -32800,
  tooLarge: -32020,
};

// The sidecar log (piext LogPath): one file per extension per agent dir,
// <agentDir>/tmp/pikit-piext/NAME.log (0600 in a 0700 folder), shared by
// the Pi processes of that agent dir. It gets the sidecar's stderr as an
// O_APPEND descriptor (so a sidecar's last words land there even after Pi
// died) and the bridge's own lines, each "[piext NAME bridge PID TIME]":
// protocol events, never payloads; with PIKIT_PIEXT_TRACE=1 also a trace of
// method names and sizes. It is bounded: at LOG_MAX_BYTES it is copied to
// NAME.log.1 and truncated in place (copy-truncate: the descriptors running
// sidecars hold stay valid), checked before each bridge line, at each spawn
// and every LOG_CHECK_MS while a sidecar runs.
const LOG_MAX_BYTES = 2 << 20;
const LOG_CHECK_MS = 5000;
const TRACE = process.env.PIKIT_PIEXT_TRACE === "1";

// agentDir is Pi's: $PI_CODING_AGENT_DIR (a leading ~ is the home folder),
// else ~/.pi/agent.
function agentDir(): string {
  const env = process.env.PI_CODING_AGENT_DIR;
  if (!env) return path.join(os.homedir(), ".pi", "agent");
  if (env === "~") return os.homedir();
  return env.startsWith("~/") || (process.platform === "win32" && env.startsWith("~\\")) ? path.join(os.homedir(), env.slice(2)) : env;
}

const logFiles = new Map<string, string>();

function logFile(name: string): string {
  let file = logFiles.get(name);
  if (!file) {
    const dir = path.join(agentDir(), "tmp", "pikit-piext");
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    file = path.join(dir, `${name}.log`);
    logFiles.set(name, file);
  }
  return file;
}

function rotateLog(file: string) {
  try {
    if (fs.statSync(file).size < LOG_MAX_BYTES) return;
    const tmp = `${file}.1.${process.pid}.tmp`;
    fs.copyFileSync(file, tmp);
    fs.renameSync(tmp, `${file}.1`);
    fs.truncateSync(file, 0);
  } catch {}
}

function log(name: string, what: string) {
  try {
    const file = logFile(name);
    rotateLog(file);
    fs.appendFileSync(file, `[piext ${name} bridge ${process.pid} ${new Date().toISOString()}] ${what}\n`, { mode: 0o600 });
  } catch {}
}

function trace(name: string, what: string) {
  if (TRACE) log(name, what);
}

const here = typeof __dirname === "string" ? __dirname : path.dirname(fileURLToPath(import.meta.url));

type Install = {
  protocol: number;
  command: string[];
  source?: string;
  manifest: {
    name: string;
    tools: any[];
    commands: { name: string; description?: string; completions?: boolean }[];
    hooks: { event: string; failClosed: boolean; timeoutMs?: number; omitPayload?: boolean; pass?: boolean; background?: boolean }[];
    skills?: boolean;
    host?: { file: string; symbol: string };
  };
};

// The allowlist: which methods of pi, ctx, ctx.ui and ctx.sessionManager the
// sidecar may call. A new need is one row. A row names a method (called with
// the JSON args) or a property (read). "dialog" rows report how they ended;
// custom rows compute their answer.
const ALLOW: Record<string, Record<string, "call" | "prop" | "dialog" | ((env: CallEnv, args: any[]) => any)>> = {
  pi: {
    appendEntry: "call", sendMessage: "call", sendUserMessage: "call", setLabel: "call", setSessionName: "call",
    getSessionName: "call", getActiveTools: "call", getAllTools: "call", setActiveTools: "call", getCommands: "call",
    getThinkingLevel: "call", setThinkingLevel: "call", getFlag: "call",
  },
  ctx: {
    mode: "prop", hasUI: "prop", cwd: "prop", model: "prop", thinkingLevel: "prop",
    isIdle: "call", abort: "call", hasPendingMessages: "call", getContextUsage: "call", compact: "call",
    getSystemPrompt: "call", isProjectTrusted: "call", shutdown: "call",
    waitForIdle: "call", navigateTree: "call", newSession: "call", fork: "call", switchSession: "call", reload: "call",
  },
  ui: {
    select: "dialog", confirm: "dialog", input: "dialog", editor: "dialog", custom: (env, args) => remoteComponent(env, args[0] ?? {}),
    notify: "call", setStatus: "call", setWidget: "call", setTitle: "call", setEditorText: "call", getEditorText: "call",
  },
  session: {
    getCwd: "call", getSessionDir: "call", getSessionId: "call", getSessionFile: "call", getSessionName: "call",
    getHeader: "call", getEntries: "call", getEntry: "call", getBranch: "call", getTree: "call", getLeafId: "call",
    getLeafEntry: "call", getLabel: "call", buildContextEntries: "call",
    // getBranchSince(id): the branch entries after id when id is on the
    // current branch ({reset: false}), else the whole branch ({reset: true}).
    getBranchSince: (env, args) => {
      const branch = env.ctx.sessionManager.getBranch();
      const i = args[0] ? branch.findIndex((e: any) => e.id === args[0]) : -1;
      return i < 0 ? { reset: true, entries: branch } : { reset: false, entries: branch.slice(i + 1) };
    },
    // getBranchCustom(customTypes?): the branch's custom entries, root
    // first; only those of the given customTypes when given. An extension
    // restoring its own entries reads them without the transcript.
    getBranchCustom: (env, args) => {
      const types = Array.isArray(args[0]) ? new Set(args[0].map(String)) : null;
      return env.ctx.sessionManager.getBranch().filter((e: any) => e?.type === "custom" && (!types || types.has(e.customType)));
    },
    getEntriesAfter: (env, args) => {
      const all = env.ctx.sessionManager.getEntries();
      if (!args[0]) return all;
      const i = all.findIndex((e: any) => e.id === args[0]);
      if (i < 0) throw rpcError(CODE.unavailable, "no entry " + String(args[0]).slice(0, 64));
      return all.slice(i + 1);
    },
  },
};

type CallEnv = { pi: any; ctx: any; signal: AbortSignal; sc: Sidecar };

const PALETTE = ["text", "accent", "border", "borderAccent", "success", "error", "warning", "muted", "dim"];

// remoteComponent shows a Go component through ctx.ui.custom. pi-tui's
// render(width) is synchronous: it returns Go's last lines for that width
// (through truncateToWidth, so no line is wider than the terminal) and asks
// Go for fresh ones, re-rendering when they arrive. Keys go to Go as pi-tui
// key names, one request after another (keys typed fast keep their order).
// Go learns the terminal's rows; an overlay gets its overlayOptions (width
// and maxHeight as "80" cells or "90%", anchor).
async function remoteComponent(env: CallEnv, spec: { id?: string; overlay?: boolean; overlayOptions?: Record<string, string> }) {
  const { ctx, sc } = env;
  if (ctx.mode !== "tui" || typeof ctx.ui?.custom !== "function") throw rpcError(CODE.unavailable, "unavailable here: ui.custom needs interactive (TUI) mode");
  const id = String(spec.id ?? "");
  // Imported here: Pi maps the module for extensions; nothing else loads it.
  const { parseKey, truncateToWidth } = await piTui();
  return await ctx.ui.custom(
    (tui: any, theme: any, _kb: any, done: (r: any) => void) => {
      let lines: string[] = [];
      let width = 0;
      let asked = "";
      let finished = false;
      let queue: Promise<void> = Promise.resolve();
      const rows = () => Number(tui?.terminal?.rows) || 0;
      const send = (method: string, params: any) => {
        queue = queue.then(() => (finished ? undefined : sc.request(method, params).then(take, fail)));
      };
      const palette: Record<string, string> = {};
      for (const name of PALETTE) {
        try {
          palette[name] = theme.getFgAnsi(name);
        } catch {}
      }
      const take = (r: any) => {
        if (finished || !r) return;
        if (Array.isArray(r.lines)) lines = r.lines.map(String);
        if (r.done) {
          finished = true;
          done(r.result);
        }
        tui.requestRender();
      };
      const fail = (e: any) => {
        if (finished) return;
        finished = true;
        done(undefined);
        trace(sc.name, "component failed: " + errText(e));
      };
      return {
        render(w: number) {
          const size = w + "x" + rows();
          if (size !== asked) {
            asked = size;
            width = w;
            send("ui/render", { id, width: w, rows: rows(), palette });
          }
          return lines.map((l) => truncateToWidth(l, w));
        },
        handleInput(data: string) {
          const key = parseKey(data) ?? data;
          send("ui/input", { id, key, width, rows: rows() });
        },
        invalidate() {
          asked = "";
        },
      };
    },
    { overlay: !!spec.overlay, overlayOptions: spec.overlay ? overlayOptions(spec.overlayOptions) : undefined },
  );
}

// piTui imports @earendil-works/pi-tui. Loaded through jiti, the bridge
// gets Pi's mapping of the name; imported natively (index.mjs) it does
// not, and resolves the package from Pi's own entry script instead.
async function piTui(): Promise<any> {
  try {
    return await import("@earendil-works/pi-tui");
  } catch (e) {
    if (!process.argv[1]) throw e;
    const entry = createRequire(fs.realpathSync(process.argv[1])).resolve("@earendil-works/pi-tui");
    return await import(pathToFileURL(entry).href);
  }
}

// overlayOptions turns Go's strings into pi-tui's OverlayOptions: "80" is
// a cell count, "90%" a percentage; only width, maxHeight and anchor pass.
function overlayOptions(o: Record<string, string> | undefined) {
  if (!o || typeof o !== "object") return undefined;
  const size = (v: any) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : typeof v === "string" && /^\d+(\.\d+)?%$/.test(v) ? v : undefined);
  const out: Record<string, any> = {};
  if (size(o.width) !== undefined) out.width = size(o.width);
  if (size(o.maxHeight) !== undefined) out.maxHeight = size(o.maxHeight);
  if (typeof o.anchor === "string" && o.anchor) out.anchor = o.anchor;
  return Object.keys(out).length ? out : undefined;
}

// parseMessage returns line as a JSON-RPC message object, or undefined.
function parseMessage(line: string): any {
  try {
    const m = JSON.parse(line);
    return m !== null && typeof m === "object" && !Array.isArray(m) && m.jsonrpc === "2.0" ? m : undefined;
  } catch {
    return undefined;
  }
}

// bounded settles as p does, or rejects at opts' timeout (with msg) or
// signal, whichever comes first.
function bounded<T>(p: Promise<T>, opts: { timeoutMs?: number; signal?: AbortSignal }, msg: string): Promise<T> {
  const { timeoutMs, signal } = opts;
  if (!timeoutMs && !signal) return p;
  return new Promise<T>((resolve, reject) => {
    let timer: any = null;
    const onAbort = () => done(() => reject(rpcError(CODE.cancelled, "aborted")));
    const done = (f: () => void) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      f();
    };
    if (timeoutMs) timer = setTimeout(() => done(() => reject(rpcError(CODE.internal, msg))), timeoutMs);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort);
    p.then(
      (v) => done(() => resolve(v)),
      (e) => done(() => reject(e)),
    );
  });
}

function rpcError(code: number, message: string) {
  const e: any = new Error(message);
  e.code = code;
  return e;
}

function errText(e: any): string {
  return e && e.message ? String(e.message) : String(e);
}

// resolveCommand turns piext.json's command into the argv to spawn. The
// npm form (piext NPMCommandPrefix) "npm:<package>/<path>" names the
// executable inside an npm package, found from this folder by Node's module
// resolution, as a published Pi package finds its per-platform
// optionalDependency: {platform} is process.platform-process.arch, ".exe"
// is appended on Windows. Errors name the file as "<package>/<path>".
// "unsupported" means no binary for this platform is installed at all. Any
// other command[0] is absolute or relative to this folder, as before.
type Resolved = { argv: string[] } | { error: string; unsupported?: boolean };

function resolveCommand(install: Install): Resolved {
  const cmd = install.command;
  const name = install.manifest.name;
  if (!String(cmd[0]).startsWith("npm:")) return { argv: cmd.map((a, i) => (i === 0 && !path.isAbsolute(a) ? path.join(here, a) : a)) };
  const platform = `${process.platform}-${process.arch}`;
  const m = /^((?:@[^/]+\/)?[^/]+)\/(.+)$/.exec(cmd[0].slice(4).split("{platform}").join(platform));
  if (!m) return { error: `piext ${name}: piext.json: bad npm command ${JSON.stringify(cmd[0])}` };
  const [, pkg, rel0] = m;
  const rel = rel0 + (process.platform === "win32" ? ".exe" : "");
  const file = `${pkg}/${rel}`;
  let own: any = {};
  try {
    own = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"));
  } catch {}
  const again = typeof own.name === "string" ? `; reinstall: pi remove npm:${own.name}, then pi install npm:${own.name}` : "";
  let dir: string;
  try {
    dir = path.dirname(createRequire(path.join(here, "package.json")).resolve(`${pkg}/package.json`));
  } catch {
    const build = install.source ? ` ${install.source}` : "";
    return { unsupported: true, error: `piext ${name}: no binary for ${platform}: the npm package ${pkg} is not installed (not published for this platform, or npm skipped optional dependencies); ${name} is off.${build}` };
  }
  let bin: any = {};
  try {
    bin = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  } catch {}
  const want = own.optionalDependencies?.[pkg] ?? own.dependencies?.[pkg];
  if (typeof want === "string" && /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(want) && bin.version !== want)
    return { error: `piext ${name}: ${pkg} is version ${bin.version}, but ${own.name} ${own.version} needs ${want}${again}` };
  const exe = path.join(dir, rel);
  let st: fs.Stats;
  try {
    st = fs.statSync(exe);
  } catch {
    return { error: `piext ${name}: the binary ${file} is missing${again}` };
  }
  if (!st.isFile()) return { error: `piext ${name}: the binary ${file} is not a file${again}` };
  if (process.platform !== "win32" && (st.mode & 0o111) === 0)
    return { error: `piext ${name}: the binary ${file} is not executable (mode ${(st.mode & 0o777).toString(8)})${again}` };
  const size = bin.piext?.sizes?.[rel];
  if (typeof size === "number" && st.size !== size) return { error: `piext ${name}: the binary ${file} is damaged: ${st.size} bytes, ${size} expected${again}` };
  return { argv: [exe, ...cmd.slice(1)] };
}

// One sidecar per installed extension per Pi process.
class Sidecar {
  name: string;
  install: Install;
  pi: any = null;
  child: any = null;
  alive = false;
  ready: Promise<void> | null = null;
  nextId = 0;
  pending = new Map<number, { resolve: (v: any) => void; reject: (e: any) => void }>();
  incoming = new Map<string, AbortController>();
  updates = new Map<string, (u: any) => void>();
  ctxs = new Map<string, { ctx: any; gen: number }>();
  nextCtx = 0;
  generation = 0;
  sessionCtx: any = null;
  bind: any = null;
  boundGeneration = 0; // the generation the running sidecar was last bound to
  binding: Promise<void> | null = null; // the current bind; never rejects
  startHook: Promise<void> | null = null; // a background session_start hook in flight; never rejects
  ctxCache: ContextCache | null = null; // the context messages the sidecar holds
  reportedOpen = false;
  spawns = 0;
  failures = 0; // failed starts in a row
  retryAt = 0; // no start before this time (Date.now()) after failures
  lastFailure = ""; // why the last start failed
  noise = 0; // non-JSON-RPC lines from this child
  host: { sym: symbol; obj: any } | null = null;

  constructor(install: Install) {
    this.install = install;
    this.name = install.manifest.name;
  }

  // ensure starts the sidecar when it is not running and resolves once it
  // answered initialize (and the rebind, when a session is known). Within a
  // backoff after failed starts it rejects at once.
  ensure(): Promise<void> {
    if (this.alive && this.ready) return this.ready;
    const wait = this.retryAt - Date.now();
    if (wait > 0) return Promise.reject(rpcError(CODE.internal, `${this.lastFailure} (next start in ${wait} ms)`));
    this.alive = true; // starting: later callers share this start
    const ready = this.start();
    this.ready = ready;
    ready.catch(() => {
      if (this.ready === ready) this.alive = false;
    });
    return ready;
  }

  private async start(): Promise<void> {
    let child: any = null;
    try {
      child = this.spawn();
      const timeoutMs = Math.min(INIT_TIMEOUT_MAX_MS, INIT_TIMEOUT_MS * 2 ** this.failures);
      const init = await this.request("initialize", { protocol: PROTOCOL, name: this.name }, { timeoutMs });
      if (!init || init.protocol !== PROTOCOL) throw new Error(`piext ${this.name}: bad initialize answer`);
      this.reportedOpen = false;
      this.boundGeneration = 0;
      const bind = this.bind;
      if (bind) {
        await this.request("session/bind", { ...bind, reason: this.spawns > 1 ? "respawn" : bind.reason }, { timeoutMs: HOOK_TIMEOUT_MS });
        this.boundGeneration = bind.generation;
      }
    } catch (e) {
      this.failures++;
      const backoff = this.failures < 2 ? 0 : Math.min(START_BACKOFF_MAX_MS, START_BACKOFF_MS * 2 ** (this.failures - 2));
      this.retryAt = Date.now() + backoff;
      this.lastFailure = errText(e);
      log(this.name, `start failed: ${this.lastFailure}; next start ${backoff ? `in ${backoff} ms` : "at the next call"}`);
      if (child) this.retire(child, "start failed", 0);
      throw e;
    }
    this.failures = 0;
  }

  // spawn starts the child and wires its pipes; it becomes this.child.
  private spawn(): any {
    const resolved = resolveCommand(this.install);
    if (!("argv" in resolved)) throw new Error(resolved.error);
    const cmd = resolved.argv;
    let logFd: number | "ignore" = "ignore";
    try {
      const file = logFile(this.name);
      rotateLog(file);
      logFd = fs.openSync(file, "a", 0o600);
    } catch {
      // no log file: stderr is dropped, never sent to Pi's stdout
    }
    const child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", logFd], env: process.env });
    if (typeof logFd === "number") fs.closeSync(logFd);
    const rotating = setInterval(() => rotateLog(logFile(this.name)), LOG_CHECK_MS);
    rotating.unref();
    child.once("exit", () => clearInterval(rotating));
    child.once("error", () => clearInterval(rotating));
    this.child = child;
    this.spawns++;
    this.noise = 0;
    const chunks: Buffer[] = [];
    let size = 0; // bytes of the line being read
    let head: Buffer | null = null; // the start of an oversized line
    log(this.name, `started sidecar pid ${child.pid}`);
    const gone = (why: string) => {
      if (this.child === child) this.detach(child, why);
    };
    // Without these listeners an EPIPE while Pi writes a large payload to a
    // dead child is an uncaught 'error' and kills Pi itself. A broken pipe
    // waits briefly for the exit that says why.
    const broken = (e: any) => setTimeout(() => gone(`pipe closed (${e?.code ?? "error"})`), PIPE_EXIT_WAIT_MS).unref();
    child.on("error", (e: any) => gone("failed: " + (e && e.code ? e.code : "spawn error")));
    child.stdin.on("error", broken);
    child.stdout.on("error", broken);
    child.on("exit", (code: any, sig: any) => gone(`exited (${sig ?? code})`));
    child.stdout.on("data", (buf: Buffer) => {
      // Split on byte 10 over Buffers; decode a whole line at once so a
      // multi-byte character split across chunks stays intact. A line
      // over the cap keeps only its head.
      let start = 0;
      for (;;) {
        const i = buf.indexOf(10, start);
        const part = buf.subarray(start, i < 0 ? buf.length : i);
        size += part.length;
        if (!head && size > MAX_MESSAGE_BYTES) {
          head = Buffer.concat([...chunks, part]).subarray(0, HEAD_BYTES);
          chunks.length = 0;
        } else if (head && head.length < HEAD_BYTES) {
          head = Buffer.concat([head, part.subarray(0, HEAD_BYTES - head.length)]);
        } else if (!head && part.length > 0) {
          chunks.push(part);
        }
        if (i < 0) break;
        start = i + 1;
        if (head) {
          this.onOversized(child, head.toString("utf8"), size);
        } else {
          const line = Buffer.concat(chunks).toString("utf8");
          if (line.trim() !== "") this.onLine(child, line);
        }
        chunks.length = 0;
        size = 0;
        head = null;
      }
    });
    this.hold();
    return child;
  }

  // detach makes child no longer this sidecar's: calls pending on it fail
  // with why, calls it made are aborted, and the next call starts anew.
  private detach(child: any, why: string) {
    log(this.name, `sidecar pid ${child.pid} ${why}`);
    if (this.noise > NOISE_LOGGED) log(this.name, `sidecar pid ${child.pid} wrote ${this.noise} non-JSON-RPC lines in all`);
    this.alive = false;
    this.child = null;
    this.ctxCache?.forget();
    const err = rpcError(CODE.internal, `piext ${this.name}: sidecar ${why}`);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    for (const a of this.incoming.values()) a.abort();
    this.incoming.clear();
    for (const h of [child, child.stdin, child.stdout]) {
      try {
        h.unref?.();
      } catch {}
    }
  }

  // retire stops child for good: it is detached, its stdin closed, and it
  // gets SIGTERM after graceMs and SIGKILL KILL_AFTER_MS later unless it
  // exited by then.
  retire(child: any, why: string, graceMs: number) {
    if (this.child === child) this.detach(child, why);
    try {
      child.stdin.end();
    } catch {}
    const running = () => child.exitCode === null && child.signalCode === null;
    const signal = (sig: string) => {
      if (!running()) return;
      log(this.name, `sidecar pid ${child.pid}: ${sig} (${why})`);
      try {
        child.kill(sig);
      } catch {}
    };
    const term = setTimeout(() => signal("SIGTERM"), graceMs);
    const kill = setTimeout(() => signal("SIGKILL"), graceMs + KILL_AFTER_MS);
    term.unref();
    kill.unref();
    child.once("exit", () => {
      clearTimeout(term);
      clearTimeout(kill);
    });
  }

  // hold keeps Pi's event loop alive only while a call is pending: an idle
  // sidecar must not keep `pi -p` from exiting, but a pending answer must
  // (Node would otherwise end the loop while Pi awaits it).
  hold() {
    const c = this.child;
    if (!c) return;
    const busy = this.pending.size > 0 || this.incoming.size > 0;
    for (const h of [c, c.stdin, c.stdout]) {
      try {
        busy ? h.ref?.() : h.unref?.();
      } catch {}
    }
  }

  // stop ends the sidecar at Pi's quit.
  stop() {
    if (this.child) this.retire(this.child, "stopped (quit)", STOP_GRACE_MS);
  }

  // write sends msg; one over the message cap is not sent (an error with
  // CODE.tooLarge naming the limit is thrown instead).
  write(msg: any) {
    if (!this.alive || !this.child) throw rpcError(CODE.internal, `piext ${this.name}: sidecar not running`);
    const what = msg.method ?? (msg.error ? "error" : "result");
    let line: string;
    try {
      line = JSON.stringify(msg);
    } catch (e: any) {
      // Past V8's longest string (about 512 MiB) stringify throws.
      if (e instanceof RangeError) throw this.tooLarge(what, 0);
      throw e;
    }
    const n = Buffer.byteLength(line);
    if (n > MAX_MESSAGE_BYTES) throw this.tooLarge(what, n);
    try {
      this.child.stdin.write(line + "\n");
    } catch (e) {
      throw rpcError(CODE.internal, `piext ${this.name}: write to sidecar: ${errText(e)}`);
    }
  }

  tooLarge(what: string, n: number) {
    const size = n > 0 ? ` of ${n} bytes` : "";
    return rpcError(CODE.tooLarge, `piext ${this.name}: ${what}${size} exceeds the message limit of ${MAX_MESSAGE_BYTES} bytes`);
  }

  // onOversized handles a line from child longer than the cap, known by
  // its head: an answer fails its call, a request is answered with the
  // error, anything else is a protocol error. JSON-RPC members come in the
  // order the Go side writes them: jsonrpc, id, then method or result/error.
  onOversized(child: any, head: string, size: number) {
    if (child !== this.child) return;
    const m = /^\s*\{"jsonrpc":"2\.0","id":(\d+|"(?:[^"\\]|\\.)*"),"(method|result|error)"/.exec(head);
    log(this.name, `sidecar pid ${child.pid} sent a message of ${size} bytes, over the limit of ${MAX_MESSAGE_BYTES} bytes`);
    if (m && m[2] === "method") {
      const id = JSON.parse(m[1]);
      this.answer({ jsonrpc: "2.0", id, error: { code: CODE.tooLarge, message: `request of ${size} bytes exceeds the message limit of ${MAX_MESSAGE_BYTES} bytes` } });
      return;
    }
    const id = m ? JSON.parse(m[1]) : undefined;
    const p = typeof id === "number" ? this.pending.get(id) : undefined;
    if (p) {
      p.reject(rpcError(CODE.tooLarge, `piext ${this.name}: answer of ${size} bytes exceeds the message limit of ${MAX_MESSAGE_BYTES} bytes`));
      return;
    }
    if (m && this.issued(id)) return; // the answer to a call given up on
    this.protocolError(child, `an oversized message (${size} bytes) that is no answer to a call`);
  }

  // issued reports whether id is one this bridge gave a call (whose answer
  // may come after the call was given up on: timed out or cancelled).
  issued(id: any): boolean {
    return Number.isSafeInteger(id) && id >= 1 && id <= this.nextId;
  }

  // protocolError replaces child after it sent what cannot be a JSON-RPC
  // answer of this bridge: its pending calls fail, and the next call
  // starts a new sidecar.
  protocolError(child: any, why: string) {
    log(this.name, `protocol error from sidecar pid ${child.pid}: ${why}; replacing it`);
    this.retire(child, `protocol error: ${why}`, 0);
  }

  // request sends a call; the promise settles with the answer, the sidecar's
  // exit (rejected within a second), the timeout or the signal.
  request(method: string, params: any, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<any> {
    const id = ++this.nextId;
    const what = method === "hook" ? `hook ${params?.event}${params?.probe ? " probe" : ""}` : method;
    return new Promise((resolve, reject) => {
      let timer: any = null;
      const onAbort = () => finish(rpcError(CODE.cancelled, "aborted"), undefined, true);
      const finish = (err: any, val: any, cancel = false) => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        this.hold();
        if (timer) clearTimeout(timer);
        trace(this.name, `settled ${id} ${what}${err ? " error: " + errText(err) : ""}`);
        opts.signal?.removeEventListener("abort", onAbort);
        if (cancel) {
          try {
            this.write({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } });
          } catch {}
        }
        err ? reject(err) : resolve(val);
      };
      this.pending.set(id, { resolve: (v) => finish(null, v), reject: (e) => finish(e, undefined) });
      this.hold();
      if (opts.timeoutMs) {
        timer = setTimeout(() => finish(rpcError(CODE.internal, `piext ${this.name}: ${method} timed out after ${opts.timeoutMs} ms`), undefined, true), opts.timeoutMs);
        timer.unref?.();
      }
      if (opts.signal) {
        if (opts.signal.aborted) return onAbort();
        opts.signal.addEventListener("abort", onAbort);
      }
      trace(this.name, `request ${id} ${what}`);
      try {
        this.write({ jsonrpc: "2.0", id, method, params });
      } catch (e) {
        finish(e, undefined);
      }
    });
  }

  // rebind binds the sidecar to this.bind (session_start): a running or
  // starting sidecar gets session/bind once ready (unless its start bound
  // it already), a stopped one starts (and binds after initialize). Calls
  // made from now on are sent after the bind was answered (call), so
  // nobody else needs to wait for it. It rejects when the start or the
  // bind failed.
  rebind(): Promise<void> {
    const bind = this.bind;
    const p =
      this.alive && this.ready
        ? this.ready.then(async () => {
            if (this.boundGeneration === bind.generation) return;
            await this.request("session/bind", bind, { timeoutMs: HOOK_TIMEOUT_MS });
            this.boundGeneration = bind.generation;
          })
        : this.ensure();
    const binding = p.then(
      () => {},
      () => {},
    );
    this.binding = binding;
    binding.finally(() => {
      if (this.binding === binding) this.binding = null;
    });
    return p;
  }

  // call makes sure the sidecar runs and is bound, and that a background
  // session_start hook was answered (unless this is that hook: first),
  // then requests; the timeout and the signal bound these waits too.
  async call(method: string, params: any, opts: { timeoutMs?: number; signal?: AbortSignal; first?: boolean } = {}) {
    const t0 = Date.now();
    await bounded(this.ensure(), opts, `piext ${this.name}: ${method}: the sidecar did not start within ${opts.timeoutMs} ms`);
    if (this.binding) await bounded(this.binding, opts, `piext ${this.name}: ${method}: the session's bind was not answered within ${opts.timeoutMs} ms`);
    if (this.startHook && !opts.first) await bounded(this.startHook, opts, `piext ${this.name}: ${method}: the session_start hook was not answered within ${opts.timeoutMs} ms`);
    const timeoutMs = opts.timeoutMs ? Math.max(1, opts.timeoutMs - (Date.now() - t0)) : undefined;
    return this.request(method, params, { ...opts, timeoutMs });
  }

  onLine(child: any, line: string) {
    if (child !== this.child) return; // a retired child's last words
    let msg = parseMessage(line);
    if (msg === undefined) {
      // A stray print before piext.Main took stdout: logged by size (never
      // its content), counted, and, when it has no LF of its own, cut from
      // the message it was glued to. Nothing goes to Pi's stdout (its RPC
      // channel).
      const at = line.indexOf('{"jsonrpc":"2.0"');
      if (at > 0) msg = parseMessage(line.slice(at));
      this.noise++;
      const n = msg === undefined ? Buffer.byteLength(line) : Buffer.byteLength(line.slice(0, at));
      if (this.noise <= NOISE_LOGGED) log(this.name, `ignored ${n} bytes of sidecar output that are not JSON-RPC (a print before piext.Main?)`);
      if (this.noise === NOISE_LOGGED) log(this.name, `more such output of this sidecar is counted, not logged`);
      if (msg === undefined) return;
    }
    if (msg.method === undefined) {
      const p = this.pending.get(msg.id);
      if (!p) {
        if (this.issued(msg.id)) trace(this.name, `late answer ${msg.id} dropped`);
        else this.protocolError(child, `an answer with an id no call has (${typeof msg.id === "number" ? msg.id : msg.id === null ? "null" : typeof msg.id})`);
        return;
      }
      if (msg.error) p.reject(rpcError(msg.error.code, msg.error.message));
      else p.resolve(msg.result);
      return;
    }
    if (msg.method === "$/cancelRequest") {
      this.incoming.get(String(msg.params?.id))?.abort();
      return;
    }
    if (msg.method === "tool/update") {
      const u = this.updates.get(msg.params?.toolCallId);
      if (u) u({ content: msg.params.content ?? [], details: msg.params.details });
      return;
    }
    if (msg.id === undefined) return;
    const ac = new AbortController();
    this.incoming.set(String(msg.id), ac);
    this.hold();
    const what = TRACE ? (msg.method === "pi/call" ? `${msg.params?.target}.${msg.params?.method}` : msg.method) : "";
    trace(this.name, `serve ${msg.id} ${what}`);
    this.serve(msg.method, msg.params, ac.signal).then(
      (result) => this.answer({ jsonrpc: "2.0", id: msg.id, result: result === undefined ? null : result }),
      (e) => this.answer({ jsonrpc: "2.0", id: msg.id, error: { code: typeof e?.code === "number" ? e.code : CODE.internal, message: errText(e) } }),
    ).finally(() => {
      trace(this.name, `served ${msg.id} ${what}`);
      this.incoming.delete(String(msg.id));
      this.hold();
    });
  }

  // answer sends an answer to a sidecar's request; one over the message
  // cap is replaced by the error that says so.
  answer(msg: any) {
    try {
      this.write(msg);
    } catch (e: any) {
      if (e?.code !== CODE.tooLarge) return;
      try {
        this.write({ jsonrpc: "2.0", id: msg.id, error: { code: CODE.tooLarge, message: errText(e) } });
      } catch {}
    }
  }

  // boundCtx is the Pi context a call is bound to: the handler's (ctxId)
  // or the current session's (generation). A session ends at its session_shutdown: from then until the next
  // session_start (while Pi disposes of it and re-runs the factory) there
  // is no current session, and session-scoped calls are stale. A handler
  // of a replaced session (one still running after the next
  // session_start) is stale too: its ctx and pi are no longer Pi's.
  boundCtx(ctxId: string, generation: number, what: string): any {
    if (ctxId) {
      const b = this.ctxs.get(ctxId);
      if (!b) throw rpcError(CODE.staleContext, `stale context: the handler of ${what}'s context has returned`);
      if (b.gen !== this.generation) throw rpcError(CODE.staleSession, `stale session: generation ${b.gen} was replaced by ${this.generation}`);
      return b.ctx;
    }
    if (generation !== this.generation) throw rpcError(CODE.staleSession, `stale session: generation ${generation} was replaced by ${this.generation}`);
    if (!this.sessionCtx) throw rpcError(CODE.staleSession, `stale session: generation ${generation} has ended`);
    return this.sessionCtx;
  }

  // hostCall runs a function of the host object on
  // globalThis[Symbol.for(symbol)] (piext HostSpec): calls[fn] must answer
  // synchronously (a thenable is refused, its rejection swallowed);
  // asyncCalls[fn] may return a promise.
  async hostCall(params: any, signal: AbortSignal): Promise<any> {
    const { ctxId, generation, symbol, fn } = params ?? {};
    const what = `host ${String(symbol).slice(0, 64)}.${String(fn).slice(0, 64)}`;
    const host: any = (globalThis as any)[Symbol.for(String(symbol))];
    const sync = host?.calls && Object.hasOwn(host.calls, fn) ? host.calls[fn] : undefined;
    const later = host?.asyncCalls && Object.hasOwn(host.asyncCalls, fn) ? host.asyncCalls[fn] : undefined;
    const f = sync ?? later;
    if (typeof f !== "function") throw rpcError(CODE.unavailable, `unavailable here: ${what}`);
    const ctx = this.boundCtx(ctxId, generation, what);
    const args: any[] = Array.isArray(params?.args) ? params.args : [];
    const env = { sessionManager: ctx.sessionManager, signal };
    const v = f.call(host, env, ...args);
    if (sync && v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function") {
      try {
        v.then(undefined, () => {});
      } catch {}
      throw rpcError(CODE.notSynchronous, `${what} returned a promise; a synchronous result is required`);
    }
    return await v;
  }

  // serve answers a sidecar's request. Pi's own errors for a replaced
  // session (a disposed runner's ctx, a re-run factory's pi before its
  // runtime is bound) become the stale-session error.
  async serve(method: string, params: any, signal: AbortSignal): Promise<any> {
    try {
      return await this.serveCall(method, params, signal);
    } catch (e: any) {
      throw staleFromPi(e);
    }
  }

  private async serveCall(method: string, params: any, signal: AbortSignal): Promise<any> {
    if (method === "host/call") return this.hostCall(params, signal);
    if (method !== "pi/call") throw rpcError(CODE.methodNotFound, "method not found: " + method);
    const { ctxId, generation, target, method: m } = params ?? {};
    // JSON has no undefined: a null argument reaches Pi as undefined, which is
    // what Pi's API means by "absent" (setStatus and setWidget clear only on
    // undefined; a stored null crashes the interactive footer).
    const args: any[] = Array.isArray(params?.args) ? params.args.map((a: any) => (a === null ? undefined : a)) : [];
    const row = ALLOW[target]?.[m];
    if (!row) throw rpcError(CODE.notAllowed, `not allowed: ${target}.${m}`);
    const ctx = this.boundCtx(ctxId, generation, `${target}.${m}`);
    const env: CallEnv = { pi: this.pi, ctx, signal, sc: this };
    if (typeof row === "function") return row(env, args);
    const obj = target === "pi" ? this.pi : target === "ctx" ? ctx : target === "ui" ? ctx.ui : ctx.sessionManager;
    if (row === "prop") return obj[m];
    if (typeof obj?.[m] !== "function") throw rpcError(CODE.unavailable, `unavailable here: ${target}.${m}`);
    if (row === "dialog") return dialog(ctx, m, args, signal);
    return await obj[m](...args);
  }

  bindCtx(ctx: any): string {
    const id = `${this.generation}.${++this.nextCtx}`;
    this.ctxs.set(id, { ctx, gen: this.generation });
    return id;
  }

  // hookFailed applies the hook's declared failure mode.
  hookFailed(event: string, failClosed: boolean, e: any) {
    const why = `piext ${this.name}: ${event} hook: ${errText(e)}`;
    if (failClosed) {
      if (event === "tool_call") return { block: true, reason: why };
      throw new Error(why);
    }
    if (!this.reportedOpen) {
      this.reportedOpen = true;
      throw new Error(why + " (failing open: the event goes on unmodified)");
    }
    return undefined;
  }
}

// Pi 1.6.0's messages for a ctx of a disposed session (after /new, /resume,
// /fork, /reload) and for a pi whose runtime is not bound yet.
const PI_STALE = ["This extension ctx is stale", "Extension runtime not initialized"];

// staleFromPi turns Pi's stale-session errors into the stale-session
// error (CODE.staleSession); other errors pass as they are.
function staleFromPi(e: any): any {
  if (typeof e?.code === "number" || !(e instanceof Error) || !PI_STALE.some((p) => e.message.startsWith(p))) return e;
  return rpcError(CODE.staleSession, `stale session: ${e.message.split(".")[0]}`);
}

// dialog shows a dialog (piext Pi.Select, Confirm, Input, Editor) and
// reports how it ended: {status: "answered", value | confirmed},
// "cancelled", "timed_out" or "no_ui". The options argument (select,
// confirm, input: args[2]; editor: args[2], which Pi's editor does not
// take) carries the timeout in ms (piext sends DefaultDialogTimeout when
// the caller gave none). The bridge ends the wait itself at the timeout
// and at the call's abort (Go cancelled it: the tool was aborted), and
// closes Pi's dialog then where Pi takes a signal. A confirm in the TUI is
// shown as Pi shows one (a select of Yes and No under title and message),
// so Escape reads as cancelled, not as No.
async function dialog(ctx: any, m: string, args: any[], signal: AbortSignal) {
  if (!ctx.hasUI) return { status: "no_ui" };
  const given = args[2] && typeof args[2] === "object" ? args[2] : {};
  const timeout = Number.isFinite(given.timeout) && given.timeout > 0 ? given.timeout : undefined;
  const ac = new AbortController();
  const opts = { ...given, signal: ac.signal };
  let call: () => Promise<any>;
  if (m === "editor") call = () => ctx.ui.editor(args[0], args[1]);
  else if (m === "confirm" && ctx.mode === "tui") call = () => ctx.ui.select(`${args[0]}\n${args[1]}`, ["Yes", "No"], opts);
  else call = () => ctx.ui[m](args[0], args[1], opts);
  const t0 = Date.now();
  const shown = (async () => ({ v: await call() }))();
  shown.catch(() => {}); // handled below, or moot once the wait ended
  let timer: any = null;
  let onAbort: () => void = () => {};
  const ended = new Promise<{ end: "timeout" | "abort" }>((resolve) => {
    if (timeout) timer = setTimeout(() => resolve({ end: "timeout" }), timeout);
    onAbort = () => resolve({ end: "abort" });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort);
  });
  let out: any;
  try {
    out = await Promise.race([shown, ended]);
  } finally {
    if (timer) clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    ac.abort(); // closes Pi's dialog when it is still shown (not the editor)
  }
  if (out.end === "abort") throw rpcError(CODE.cancelled, "aborted");
  if (out.end === "timeout") return { status: "timed_out" };
  const v = out.v;
  // Pi's own timer (it got the timeout too) may end the dialog first.
  const timedOut = timeout !== undefined && Date.now() - t0 >= timeout - 20;
  if (m === "confirm" && ctx.mode === "tui") {
    if (v === "Yes") return { status: "answered", confirmed: true };
    if (v === "No") return { status: "answered", confirmed: false };
    return { status: timedOut ? "timed_out" : "cancelled" };
  }
  if (m === "confirm") return v ? { status: "answered", confirmed: true } : { status: timedOut ? "timed_out" : "answered", confirmed: false };
  if (v === undefined || v === null) return { status: timedOut ? "timed_out" : "cancelled" };
  return { status: "answered", value: String(v) };
}

// The context hook's incremental send (piext doc, "The context hook"). Pi
// clones the messages before every dispatch, so object identity says
// nothing across calls. A message is known when its leaves equal, in
// order, those of a message sent in the last call (or warm-up): every key,
// string, number, boolean, null/undefined, array length, prototype and
// toJSON result, which is all JSON.stringify reads. The comparison is exact
// (=== on two strings compares their characters, a memcmp) and costs a
// fraction of hashing the transcript (15 MB: ~1.8 ms against ~11 ms for
// SHA-1). The leaves kept are primitives (or the prototypes' identity), so
// an object another extension edits in place after the call cannot change
// them; they hold the last call's strings (about the transcript's size).
// Ids are opaque to the sidecar: one id, one content, for the bridge's life.
const ARR = { leaf: "array" };
const OBJ = { leaf: "object" };
const JSN = { leaf: "toJSON" };

function leavesOf(v: any, out: any[]): void {
  if (v === null || typeof v !== "object") {
    out.push(v);
  } else if (Array.isArray(v)) {
    out.push(ARR, v.length);
    for (const x of v) leavesOf(x, out);
  } else if (typeof v.toJSON === "function") {
    out.push(JSN);
    leavesOf(v.toJSON(), out);
  } else {
    const keys = Object.keys(v);
    out.push(OBJ, Object.getPrototypeOf(v), keys.length);
    for (const k of keys) {
      out.push(k);
      leavesOf(v[k], out);
    }
  }
}

// sameLeaves compares v with leaves from index i: the index after v's
// leaves when they are equal, else -1.
function sameLeaves(v: any, leaves: any[], i: number): number {
  if (v === null || typeof v !== "object") return leaves[i] === v ? i + 1 : -1;
  if (Array.isArray(v)) {
    if (leaves[i] !== ARR || leaves[i + 1] !== v.length) return -1;
    i += 2;
    for (const x of v) if ((i = sameLeaves(x, leaves, i)) < 0) return -1;
    return i;
  }
  if (typeof v.toJSON === "function") return leaves[i] === JSN ? sameLeaves(v.toJSON(), leaves, i + 1) : -1;
  const keys = Object.keys(v);
  if (leaves[i] !== OBJ || leaves[i + 1] !== Object.getPrototypeOf(v) || leaves[i + 2] !== keys.length) return -1;
  i += 3;
  for (const k of keys) {
    if (leaves[i] !== k) return -1;
    if ((i = sameLeaves(v[k], leaves, i + 1)) < 0) return -1;
  }
  return i;
}

type Sent = { id: string; leaves: any[] };
type Wire = { h: string; m?: any };

// ContextCache assigns ids to context messages and knows which ids the
// sidecar holds (those of the last call it was sent).
class ContextCache {
  private byKey = new Map<string, Sent[]>(); // the last call's messages by cheap key
  private known = new Set<string>();
  private readonly prefix = randomBytes(6).toString("base64url") + ".";
  warming: Promise<void> | null = null; // a context/warm in flight
  private next = 0;

  // wire returns input as the sidecar receives it: {h} for a message it
  // holds, {h, m} for one it does not (every one when full). From then on
  // the sidecar is taken to hold exactly these; it answers "unknown
  // message" when it does not, and the caller resends in full.
  wire(input: any[], full: boolean): Wire[] {
    const byKey = new Map<string, Sent[]>();
    const out: Wire[] = new Array(input.length);
    for (let i = 0; i < input.length; i++) {
      const m = input[i];
      const key = `${m?.role}\u0000${m?.timestamp}\u0000${m?.toolCallId ?? ""}`;
      const seen = byKey.get(key);
      const sent = this.find(m, this.byKey.get(key), seen?.length ?? 0) ?? this.fresh(m);
      seen ? seen.push(sent) : byKey.set(key, [sent]);
      out[i] = !full && this.known.has(sent.id) ? { h: sent.id } : { h: sent.id, m };
    }
    this.byKey = byKey;
    this.known = new Set(out.map((w) => w.h));
    return out;
  }

  // find looks for m among the last call's messages of its key: first the
  // one at the same rank (the common case, O(1)), then up to 8 others.
  private find(m: any, cands: Sent[] | undefined, rank: number): Sent | undefined {
    if (!cands) return undefined;
    const same = (c: Sent) => sameLeaves(m, c.leaves, 0) === c.leaves.length;
    if (rank < cands.length && same(cands[rank])) return cands[rank];
    for (let j = 0; j < cands.length && j < 8; j++) if (j !== rank && same(cands[j])) return cands[j];
    return undefined;
  }

  private fresh(m: any): Sent {
    const leaves: any[] = [];
    leavesOf(m, leaves);
    return { id: this.prefix + (++this.next).toString(36), leaves };
  }

  // forget drops what the sidecar holds (respawn, rebind, failed warm-up).
  forget() {
    this.byKey = new Map();
    this.known = new Set();
  }
}

function applyEdits(input: any[], res: any): any[] {
  const out: any[] = [];
  for (const e of res.edits ?? []) {
    if (e.message !== undefined) out.push(e.message);
    else for (let i = 0; i < (e.count ?? 0); i++) out.push(input[(e.from ?? 0) + i]);
  }
  return out;
}

// retireHost removes a host object's globalThis binding only when it still
// holds that very object, then lets the host signal cancellation.
function retireHost(sym: symbol, host: any) {
  const g: any = globalThis;
  if (g[sym] === host) delete g[sym];
  try {
    host?.retire?.();
  } catch {}
}

export default function (pi: any) {
  const install: Install = JSON.parse(fs.readFileSync(path.join(here, "piext.json"), "utf8"));
  if (install.protocol !== PROTOCOL) {
    throw new Error(`piext ${install.manifest?.name}: protocol mismatch: the bridge speaks ${PROTOCOL}, piext.json ${install.protocol}; run \`pikit ext install ${install.manifest?.name}\` again`);
  }
  const g: any = globalThis;
  const resolved = resolveCommand(install);
  if ("unsupported" in resolved && resolved.unsupported) {
    // No binary for this platform: register nothing, say so once per Pi
    // process (on stderr where Pi has no UI: print and JSON modes).
    const shown = Symbol.for("pikit.piext.unsupported." + install.manifest.name);
    pi.on("session_start", (_ev: any, ctx: any) => {
      if (g[shown]) return;
      g[shown] = true;
      if (ctx.hasUI) ctx.ui.notify(resolved.error, "warning");
      else process.stderr.write(resolved.error + "\n");
    });
    return;
  }
  const key = Symbol.for("pikit.piext." + install.manifest.name);
  const sc: Sidecar = g[key] ?? (g[key] = new Sidecar(install));
  sc.pi = pi;
  sc.install = install;
  // The sidecar starts now, not awaited: its exec and initialize overlap
  // Pi's own start-up until session_start, which binds it. A failed start
  // is logged; the next call starts it again.
  sc.ensure().catch(() => {});
  // A re-run (/new, /resume, /fork, /reload) comes after the old session's
  // disposal: until session_start there is no session to call into.
  sc.sessionCtx = null;
  const name = install.manifest.name;

  // withCtx runs f with a ctxId bound to ctx for the handler's duration.
  const withCtx = async <T>(ctx: any, f: (ctxId: string) => Promise<T>): Promise<T> => {
    const id = sc.bindCtx(ctx);
    try {
      return await f(id);
    } finally {
      sc.ctxs.delete(id);
    }
  };

  for (const t of install.manifest.tools) {
    pi.registerTool({
      name: t.name,
      label: t.label,
      description: t.description,
      parameters: t.parameters,
      ...(t.promptSnippet ? { promptSnippet: t.promptSnippet } : {}),
      ...(t.promptGuidelines ? { promptGuidelines: t.promptGuidelines } : {}),
      ...(t.executionMode ? { executionMode: t.executionMode } : {}),
      async execute(toolCallId: string, params: any, signal: AbortSignal | undefined, onUpdate: any, ctx: any) {
        if (onUpdate) sc.updates.set(toolCallId, onUpdate);
        try {
          const res = await withCtx(ctx, (ctxId) =>
            sc.call("tool/execute", { tool: t.name, toolCallId, params, ctxId, generation: sc.generation }, { signal }),
          );
          return { content: res?.content ?? [], details: res?.details ?? {}, ...(res?.isError ? { isError: true } : {}) };
        } finally {
          sc.updates.delete(toolCallId);
        }
      },
    });
  }

  for (const c of install.manifest.commands) {
    pi.registerCommand(c.name, {
      description: c.description,
      ...(c.completions
        ? {
            getArgumentCompletions: async (prefix: string) => {
              try {
                const r = await sc.call("command/complete", { command: c.name, prefix }, { timeoutMs: HOOK_TIMEOUT_MS });
                return r?.items ?? null;
              } catch {
                return null;
              }
            },
          }
        : {}),
      handler: (args: string, ctx: any) =>
        withCtx(ctx, (ctxId) => sc.call("command/run", { command: c.name, args, ctxId, generation: sc.generation })),
    });
  }

  const hooks = new Map(install.manifest.hooks.map((h) => [h.event, h]));
  let contextCalls = 0; // context events forwarded by this factory run

  // forward sends one hook to Go; first marks the background
  // session_start hook, which later calls wait for (Sidecar.call).
  const forward = async (event: string, ev: any, ctx: any, first = false) => {
    const spec = hooks.get(event)!;
    const isContext = event === "context" || event === "context_with_system";
    // A context call drops the warm-up: it sends what the sidecar lacks,
    // or its hook passes it (then the warm-up could only compete with
    // Pi's own work on the call).
    if (isContext) {
      contextCalls++;
      warmSoon.cancel();
    } else warmSoon.defer();
    // A hook with its own (longer) timeout is also cancelled by Pi's abort
    // of the run (ctx.signal), so it cannot outlive the run.
    let signal: AbortSignal | undefined;
    try {
      signal = spec.timeoutMs ? ctx?.signal : undefined;
    } catch {} // a stale ctx
    try {
      return await withCtx(ctx, async (ctxId) => {
        const base = { event, ctxId, generation: sc.generation };
        const timeoutMs = spec.timeoutMs ?? HOOK_TIMEOUT_MS;
        if (event !== "context" && event !== "context_with_system") {
          // null (Go's nil) means "no change": undefined to Pi, which would
          // take null as a value (before_provider_request replaces the payload).
          const res = (await sc.call("hook", { ...base, payload: spec.omitPayload ? null : ev }, { timeoutMs, signal, first })) ?? undefined;
          return event === "session_before_compact" ? preparationEdits(ev, res) : res;
        }
        const input: any[] = ev.messages ?? [];
        const cache = (sc.ctxCache ??= new ContextCache());
        // A warm-up still in flight goes first in Go anyway: wait for it
        // here, so the hook's timeout counts only the hook's own work.
        if (cache.warming) await cache.warming;
        // A hook with Pass (piext Hook.Pass) is asked first, with no
        // message: when it passes, nothing is sent and the call is
        // unchanged; the mirror stays as it was (the next call that is not
        // passed sends what it lacks). A failed ask goes on as if the hook
        // had no Pass.
        if (spec.pass && (await passes(base, timeoutMs, signal))) {
          trace(name, "context: pass");
          return undefined;
        }
        // Known once sent: the sidecar mirrors a call even when its answer
        // comes too late; if it did not, it answers "unknown message" and
        // the caller resends in full.
        const send = (full: boolean) => {
          const messages = cache.wire(input, full);
          if (TRACE) trace(name, `context: ${messages.length} messages, ${messages.filter((w) => w.m !== undefined).length} in full`);
          return sc.call("hook", { ...base, messages }, { timeoutMs, signal });
        };
        let res: any;
        try {
          res = await send(false);
        } catch (e: any) {
          if (e?.code !== CODE.unknownMessage) throw e;
          res = await send(true);
        }
        return res ? { messages: applyEdits(input, res) } : undefined;
      });
    } catch (e: any) {
      // Pi ended the run (Esc, /new and the other replacements abort it
      // first): the event's outcome is moot, and a fail-open hook's abort
      // is no failure to report. A fail-closed hook still fails closed.
      if (!spec.failClosed && signal?.aborted && e?.code === CODE.cancelled) {
        trace(name, `${event} hook: aborted with the run`);
        return undefined;
      }
      if (first) throw e; // the background session_start hook: logged, not reported to Pi
      return sc.hookFailed(event, spec.failClosed, e);
    }
  };

  // passes asks a context hook with Pass whether the call passes unchanged.
  const passes = async (base: any, timeoutMs: number, signal: AbortSignal | undefined): Promise<boolean> => {
    try {
      return (await sc.call("hook", { ...base, probe: true }, { timeoutMs, signal }))?.pass === true;
    } catch {
      return false;
    }
  };

  // contextPasses asks every context hook whether it passes (none may
  // lack Pass), bound to the session (no handler's context).
  const contextPasses = async (generation: number): Promise<boolean> => {
    const specs = ["context", "context_with_system"].flatMap((e) => hooks.get(e) ?? []);
    if (specs.length === 0 || specs.some((h) => !h.pass)) return false;
    for (const h of specs) {
      if (!(await passes({ event: h.event, ctxId: "", generation }, h.timeoutMs ?? HOOK_TIMEOUT_MS, undefined))) return false;
    }
    return true;
  };

  // preparationEdits applies a session_before_compact result's
  // `preparation` (fields of Pi's CompactionPreparation) to the event's own
  // preparation object, which Pi 1.6.0 then hands to its default summarizer,
  // and returns the rest of the result (cancel, compaction) for Pi.
  const preparationEdits = (ev: any, res: any) => {
    if (!res || typeof res !== "object" || !res.preparation || typeof res.preparation !== "object") return res;
    const { preparation, ...rest } = res;
    if (ev?.preparation && typeof ev.preparation === "object") Object.assign(ev.preparation, preparation);
    return Object.keys(rest).length ? rest : undefined;
  };

  for (const h of install.manifest.hooks) {
    if (h.event === "session_start" || h.event === "session_shutdown" || h.event === "resources_discover") continue;
    pi.on(h.event, (ev: any, ctx: any) => forward(h.event, ev, ctx));
  }

  // warmContext sends the session's messages (what its first LLM call
  // carries) to the sidecar's context mirror in the background, so that
  // call sends ids only instead of the whole transcript. Best effort: when
  // it fails, the first call sends in full.
  const warmContext = async (ctx: any, generation: number) => {
    // While every context hook passes (piext Hook.Pass), no call needs
    // the mirror: nothing is sent. A context call made meanwhile sent what
    // it needed: the warm-up is moot.
    const calls = contextCalls;
    if (await contextPasses(generation)) return trace(name, "context/warm: pass");
    if (calls !== contextCalls || generation !== sc.generation) return;
    let msgs: any;
    try {
      const sm = ctx.sessionManager;
      msgs = (sm.buildSessionProjection ?? sm.buildSessionContext).call(sm).messages;
    } catch {
      return;
    }
    if (!Array.isArray(msgs) || msgs.length === 0) return;
    const cache = (sc.ctxCache ??= new ContextCache());
    let messages: any[];
    try {
      messages = cache.wire(msgs, false);
    } catch {
      return cache.forget();
    }
    trace(name, `context/warm: ${messages.length} messages`);
    const warming = sc.call("context/warm", { generation: sc.generation, messages }, { timeoutMs: WARM_TIMEOUT_MS }).then(
      () => {},
      () => cache.forget(),
    );
    cache.warming = warming;
    warming.finally(() => {
      if (cache.warming === warming) cache.warming = null;
    });
  };

  // warmSoon runs warmContext once the session has been quiet (no hook)
  // for WARM_QUIET_MS after session_start: schedule arms it, each hook
  // re-arms it (defer), the first context call drops it (cancel; that
  // call sends what it lacks), as does the session's end.
  const warmSoon = (() => {
    let timer: any = null;
    let pending: { ctx: any; generation: number } | null = null;
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        const p = pending;
        timer = pending = null;
        if (p && p.generation === sc.generation) warmContext(p.ctx, p.generation);
      }, WARM_QUIET_MS);
      timer.unref?.();
    };
    return {
      schedule(ctx: any) {
        if (!hooks.has("context") && !hooks.has("context_with_system")) return;
        pending = { ctx, generation: sc.generation };
        arm();
      },
      defer() {
        if (pending) arm();
      },
      cancel() {
        if (timer) clearTimeout(timer);
        timer = pending = null;
      },
    };
  })();

  pi.on("session_start", async (ev: any, ctx: any) => {
    trace(name, "session_start: begin");
    sc.generation++;
    sc.sessionCtx = ctx;
    for (const [id, b] of sc.ctxs) if (b.gen !== sc.generation) sc.ctxs.delete(id);
    const sm = ctx.sessionManager;
    sc.bind = { generation: sc.generation, reason: ev.reason, sessionId: sm.getSessionId(), sessionFile: sm.getSessionFile() ?? "", cwd: ctx.cwd };
    sc.ctxCache?.forget(); // the bind empties the sidecar's mirror
    // The bind goes once the sidecar is ready; every later call waits for
    // it, Pi does not: without a session_start hook, Pi's start-up (and
    // its first model request) goes on while the sidecar starts.
    const bound = sc.rebind();
    const spec = hooks.get("session_start");
    try {
      if (!spec) {
        bound.catch(() => {}); // a later call will start it again
        return;
      }
      if (spec.background) {
        // Pi goes on; every later call waits until Go answered the hook.
        const run = bound.then(() => forward("session_start", ev, ctx, true));
        const done = run.then(
          () => {},
          (e) => log(name, `session_start hook (background): ${errText(e)}`),
        );
        sc.startHook = done;
        done.finally(() => {
          if (sc.startHook === done) sc.startHook = null;
        });
        return;
      }
      try {
        await bound;
      } catch (e) {
        return sc.hookFailed("session_start", hooks.get("session_start")!.failClosed, e);
      }
      return await forward("session_start", ev, ctx);
    } finally {
      warmSoon.schedule(ctx);
      trace(name, "session_start: end");
    }
  });

  pi.on("session_shutdown", async (ev: any, ctx: any) => {
    warmSoon.cancel();
    let res: any;
    if (hooks.has("session_shutdown") && sc.alive) res = await forward("session_shutdown", ev, ctx);
    sc.sessionCtx = null; // the session ended: session-scoped calls are stale until the next session_start
    if (sc.host) {
      retireHost(sc.host.sym, sc.host.obj);
      sc.host = null;
    }
    if (ev.reason === "quit") sc.stop();
    return res;
  });

  // The host object (piext HostSpec): created by this factory run from the
  // host file's default export, bound on globalThis under its symbol, and
  // retired at session_shutdown (or here, if a predecessor is still bound).
  const hostSpec = install.manifest.host;
  let hostReady: Promise<void> | undefined;
  if (hostSpec) {
    hostReady = (async () => {
      const mod: any = await import(pathToFileURL(path.join(here, hostSpec.file)).href);
      const factory = mod?.default ?? mod;
      if (typeof factory !== "function") throw new Error(`piext ${name}: host file ${hostSpec.file} has no default export function`);
      const sym = Symbol.for(hostSpec.symbol);
      if (sc.host) retireHost(sc.host.sym, sc.host.obj);
      const obj = factory(pi, { name, dir: here });
      (globalThis as any)[sym] = obj;
      sc.host = { sym, obj };
    })();
  }

  if (install.manifest.skills || hooks.has("resources_discover")) {
    pi.on("resources_discover", async (ev: any, ctx: any) => {
      let res: any = {};
      if (hooks.has("resources_discover")) res = (await forward("resources_discover", ev, ctx)) ?? {};
      if (install.manifest.skills) res = { ...res, skillPaths: [...(res.skillPaths ?? []), path.join(here, "skills")] };
      return res;
    });
  }
  return hostReady;
}
