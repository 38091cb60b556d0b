// bench.mjs drives the installed midcompact bridge (index.ts) without Pi,
// as piext/testdata/harness.mjs does: a fake `pi` records registrations,
// a fake ctx answers the calls the sidecar makes. It times the context
// hook around the handler (Node hrtime) against a no-op TypeScript context
// handler timed the same way in the same run.
//   node --experimental-strip-types bench.mjs <folder>/index.ts <data.json> <iterations>
// data.json: {messages: AgentMessage[], branch: SessionEntry[]}.
// Prints "BENCH <json>" on stdout.
import * as fs from "node:fs";

const [, , bridgePath, dataPath, itersArg] = process.argv;
const iters = Number(itersArg);
const data = JSON.parse(fs.readFileSync(dataPath, "utf8"));
let branch = data.branch;
const keep = setInterval(() => {}, 1000);
const handlers = {};
const pi = {
  on: (e, h) => (handlers[e] ??= []).push(h),
  registerTool: () => {},
  registerCommand: () => {},
  appendEntry: () => {},
};
const ctx = {
  hasUI: true,
  mode: "rpc",
  cwd: "/project",
  ui: { notify: () => {}, setStatus: () => {} },
  sessionManager: {
    getSessionId: () => "session-1",
    getSessionFile: () => undefined,
    getEntries: () => branch,
    getBranch: () => branch,
    getLeafId: () => branch[branch.length - 1]?.id ?? null,
    getLeafEntry: () => branch[branch.length - 1],
  },
};
const mod = await import(bridgePath);
mod.default(pi);
const emit = async (event, ev) => {
  let res;
  for (const h of handlers[event] ?? []) res = await h(ev, ctx);
  return res;
};
await emit("session_start", { reason: "startup" });

const base = data.messages;
const ours = handlers.context[0];
const noop = async () => undefined;
const time = async (h) => {
  const ms = [];
  for (let i = 0; i < iters; i++) {
    const msgs = structuredClone(base); // Pi clones before every dispatch
    const t0 = process.hrtime.bigint();
    await h({ type: "context", messages: msgs }, ctx);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length * 0.5)], p95: ms[Math.floor(ms.length * 0.95)] };
};
const sidecar = globalThis[Symbol.for("pikit.piext.midcompact")];
const idle = async () => {
  while (sidecar.pending.size > 0) await new Promise((r) => setTimeout(r, 5));
};
const call = async () => {
  const t0 = process.hrtime.bigint();
  let res = null;
  let error = null;
  try {
    res = await ours({ type: "context", messages: structuredClone(base) }, ctx);
  } catch (e) {
    error = String(e.message);
  }
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, res, error };
};
// The first call without a warm-up (this sessionManager has no
// buildSessionProjection) ships every message to the sidecar.
const cold = await call();
await call();
const floor = await time(noop);
const projection = await time(ours);
// A resumed session: the bridge sends the session's messages ahead
// (context/warm). warmed: the first call once that is done; raced: the
// first call right after session_start, before the warm-up (which it
// drops: it sends what the sidecar lacks itself).
ctx.sessionManager.buildSessionProjection = () => ({ entries: [], messages: structuredClone(base), thinkingLevel: "off", model: null });
await emit("session_start", { reason: "resume" });
// The bridge sends the warm-up once the session has been quiet for a
// second after session_start: wait until it is sent, then answered.
for (const deadline = Date.now() + 30_000; sidecar.pending.size === 0; ) {
  if (Date.now() > deadline) throw new Error("no context/warm within 30 s of session_start");
  await new Promise((r) => setTimeout(r, 5));
}
await idle();
const warmed = await call();
await emit("session_start", { reason: "resume" });
const raced = await call();
const projected = warmed.res;
const firstSummaries = [cold, warmed, raced].map((c) => c.res?.messages?.filter((m) => m.customType === "midcompact-summary").length ?? 0);
delete ctx.sessionManager.buildSessionProjection;
// The same bridge path with nothing to project (no committed blocks on a
// new branch): the piext floor of a 15 MB context call.
branch = [];
await emit("session_start", { reason: "new" });
for (let i = 0; i < 2; i++) await call();
const unchanged = await time(ours);
const out = projected?.messages ?? null;
const summaries = out ? out.filter((m) => m.customType === "midcompact-summary").length : 0;
const line = "BENCH " + JSON.stringify({ n: base.length, iters, floor, unchanged, projection, firstColdMs: cold.ms, firstWarmedMs: warmed.ms, firstRacedMs: raced.ms, firstErrors: [cold.error, warmed.error, raced.error], firstSummaries, outMessages: out?.length ?? null, summaries }) + "\n";
sidecar?.stop();
clearInterval(keep);
// Exit once the line is flushed (a pipe's writes are asynchronous).
process.stdout.write(line, () => process.exit(0));
