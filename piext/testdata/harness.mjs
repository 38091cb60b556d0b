// harness.mjs drives the installed bridge (index.ts) without Pi: a fake `pi`
// records registrations, a fake ctx answers the allowlisted calls. Run by
// bridge_test.go with Node 22 (--experimental-strip-types).
//   node harness.mjs <folder>/index.ts <mode> [args]
// Prints result lines "KEY <json>" on stdout.
import * as fs from "node:fs";

const [, , bridgePath, mode, ...rest] = process.argv;
const keep = setInterval(() => {}, 1000); // Pi's own handles keep its loop alive
const handlers = {};
const tools = {};
const commands = {};
const entries = [];
const pi = {
  on: (e, h) => (handlers[e] ??= []).push(h),
  registerTool: (t) => (tools[t.name] = t),
  registerCommand: (n, c) => (commands[n] = c),
  appendEntry: (customType, data) => entries.push({ type: "custom", customType, data, id: "e" + entries.length }),
};
const ctx = {
  hasUI: true,
  mode: "rpc",
  cwd: "/project",
  ui: { notify: () => {} },
  sessionManager: {
    getSessionId: () => "session-1",
    getSessionFile: () => undefined,
    getEntries: () => entries,
    getLeafEntry: () => entries[entries.length - 1] ?? { type: "message" },
  },
};
const out = (k, v) => process.stdout.write(k + " " + JSON.stringify(v) + "\n");
const mod = await import(bridgePath);
mod.default(pi);
const sidecar = globalThis[Symbol.for("pikit.piext.probe")];
const emit = async (event, ev) => {
  let res;
  for (const h of handlers[event] ?? []) res = await h(ev, ctx);
  return res;
};
const probePid = () => {
  const lines = fs.readFileSync(process.env.PIKIT_PROBE_OUT, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  return lines.filter((l) => l.ev === "start").pop().pid;
};
const echo = (word) => tools.probe_echo.execute("call-" + word.length, { word }, undefined, () => {}, ctx);

await emit("session_start", { reason: "startup" });

if (mode === "echo") {
  out("RESULT", await echo(rest[0]));
} else if (mode === "exitreject") {
  const pending = tools.probe_sleep.execute("call-sleep", { ms: 10000 }, undefined, () => {}, ctx);
  const settled = pending.then(
    (v) => ({ ok: true, v }),
    (e) => ({ ok: false, message: String(e.message) }),
  );
  await new Promise((r) => setTimeout(r, 300));
  process.kill(probePid(), "SIGKILL");
  const t0 = Date.now();
  // A call right after the kill writes to a dying child: guarded, no crash.
  const early = await echo("early").then((v) => v.content[0].text, (e) => "error: " + e.message);
  const r = await settled;
  out("REJECT", { ms: Date.now() - t0, ...r, early });
  out("AFTER", (await echo("after")).content[0].text);
} else if (mode === "inplace") {
  const msgs = [
    { role: "user", content: [{ type: "text", text: "hello" }], timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 2 },
    { role: "user", content: [{ type: "text", text: "more" }], timestamp: 3 },
  ];
  const first = await emit("context", { type: "context", messages: structuredClone(msgs) });
  const edited = structuredClone(msgs);
  edited[0].content[0].text = "hello CTXEDIT"; // an earlier extension edits an old message in place
  const second = await emit("context", { type: "context", messages: edited });
  out("INPLACE", { first: first ?? null, second: second?.messages?.[0]?.content?.[0]?.text ?? null, n: second?.messages?.length });
} else if (mode === "bench") {
  // bench <messages> <bytes per message> <iterations>
  const [n, size, iters] = rest.map(Number);
  const base = [];
  for (let i = 0; i < n; i++) {
    base.push({ role: i % 2 ? "assistant" : "user", content: [{ type: "text", text: ("m" + i + " ").padEnd(size, "x") }], timestamp: i });
  }
  const noop = async () => undefined;
  const ours = handlers.context[0];
  const time = async (h, mutate) => {
    const ms = [];
    for (let i = 0; i < iters; i++) {
      const msgs = structuredClone(base); // Pi clones before every dispatch
      if (mutate) mutate(msgs, i);
      const t0 = process.hrtime.bigint();
      await h({ type: "context", messages: msgs }, ctx);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((a, b) => a - b);
    return { p50: ms[Math.floor(ms.length * 0.5)], p95: ms[Math.floor(ms.length * 0.95)] };
  };
  // The first call ships everything; at 15 MB it may pass the 5 s hook
  // timeout on a loaded machine (failing open), the sidecar still mirrors it.
  const t0 = Date.now();
  let firstError = null;
  for (let i = 0; i < 2; i++) {
    try {
      await ours({ type: "context", messages: structuredClone(base) }, ctx);
    } catch (e) {
      firstError = String(e.message);
    }
  }
  const firstMs = Date.now() - t0;
  const floor = await time(noop);
  const unchanged = await time(ours);
  // Go changes one message of at most 10 KB (the probe rewrites CTXEDIT).
  const oneEdit = await time(ours, (m, i) => {
    m[m.length - 1].content[0].text = ("CTXEDIT " + i).padEnd(Math.min(size, 10240), "y");
  });
  const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${probePid()}/status`, "utf8"))[1]);
  out("BENCH", { n, size, iters, floor, unchanged, oneEdit, sidecarRssKiB: rss, firstMs, firstError });
}
sidecar?.stop();
clearInterval(keep);
// Exit once the sidecar had its 100 ms to stop and every line written is
// flushed (a pipe's writes are asynchronous: exiting on the timer alone can
// cut the output on a loaded machine).
setTimeout(() => process.stdout.write("", () => process.exit(0)), 100);
