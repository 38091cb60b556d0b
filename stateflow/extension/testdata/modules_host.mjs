// modules_host.mjs checks host.ts and modules.ts (seed 003 "Public entry
// and lifecycle") under Node 22 with Pi's own SessionManager (in-memory
// managers need no model and no network). Run by modules_host_test.go:
//   node --experimental-strip-types modules_host.mjs <dir with host.ts, modules.ts> <pi sdk index.js> <tmp dir>
// Prints "OK <name>" or "FAIL <name>: <detail>" per check, then "DONE".
import * as fs from "node:fs";
import * as path from "node:path";

const [, , dir, sdk, tmp] = process.argv;
const { SessionManager } = await import(sdk);
const { registerStateFlowModule } = await import(path.join(dir, "modules.ts"));
const createHost = (await import(path.join(dir, "host.ts"))).default;
const SYM = Symbol.for("pikit.stateflow.host/1");
const g = globalThis;

const checks = [];
function check(name, f) {
  checks.push([name, f]);
}
async function throwsLike(f, re) {
  try {
    await f();
  } catch (e) {
    if (re.test(String(e?.message))) return e;
    throw new Error("threw " + e?.message);
  }
  throw new Error("did not throw");
}
function assert(c, what) {
  if (!c) throw new Error(what);
}
const notes = (over = {}) => ({
  id: "x_acme_notes",
  apiVersion: 1,
  schemaVersion: 1,
  immutable: false,
  validate: (v) => typeof v === "object" && v !== null && Array.isArray(v.entries),
  context: (c) => (c ? [{ kind: "data", value: c }] : []),
  ...over,
});
// bind emulates the bridge: a host per factory run, bound on globalThis;
// retire removes only its own binding, then signals.
function bind(opts = { name: "stateflow" }) {
  const h = createHost({}, opts);
  g[SYM] = h;
  return h;
}
function retire(h) {
  if (g[SYM] === h) delete g[SYM];
  h.retire();
}
const env = (sm, signal = new AbortController().signal) => ({ sessionManager: sm, signal });
const tok = (h, sm) => {
  const c = h.calls.catalog(env(sm));
  return { host: c.host, generation: c.generation };
};
const mem = () => SessionManager.inMemory(tmp);

check("host absent fails explicitly", async () => {
  delete g[SYM];
  await throwsLike(() => registerStateFlowModule(mem(), notes()), /State Flow module host is not loaded/);
});

check("register, catalog snapshot, validate through the host", () => {
  const h = bind();
  const sm = mem();
  const dispose = registerStateFlowModule(sm, notes());
  const c = h.calls.catalog(env(sm));
  assert(c.modules.length === 1 && c.modules[0].id === "x_acme_notes" && c.modules[0].schemaVersion === 1 && !c.modules[0].immutable, JSON.stringify(c));
  assert(h.calls.validate(env(sm), tok(h, sm), "x_acme_notes", { entries: ["a"] }) === true, "validate true");
  assert(h.calls.validate(env(sm), tok(h, sm), "x_acme_notes", { entries: 1 }) === false, "validate false");
  dispose();
  retire(h);
});

check("duplicate id, apiVersion, id, schemaVersion, missing callbacks fail explicitly", async () => {
  const h = bind();
  const sm = mem();
  registerStateFlowModule(sm, notes());
  await throwsLike(() => registerStateFlowModule(sm, notes()), /x_acme_notes is already registered for this session/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "x_b", apiVersion: 2 })), /apiVersion 2 is not supported/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "acme" })), /must match x_\[a-z\]/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "x_c", schemaVersion: 0 })), /positive safe integer/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "x_c", schemaVersion: 2 ** 53 })), /positive safe integer/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "x_d", context: undefined })), /validate and context must be functions/);
  await throwsLike(() => registerStateFlowModule({}, notes({ id: "x_e" })), /must be ctx.sessionManager/);
  retire(h);
});

check("two SDK managers have independent catalogs", () => {
  const h = bind();
  const a = mem();
  const b = mem();
  registerStateFlowModule(a, notes());
  registerStateFlowModule(b, notes());
  registerStateFlowModule(b, notes({ id: "x_other" }));
  const ca = h.calls.catalog(env(a));
  const cb = h.calls.catalog(env(b));
  assert(ca.modules.length === 1 && cb.modules.length === 2, JSON.stringify([ca, cb]));
  retire(h);
});

check("disposer idempotent, cannot revoke a later equal-id registration", () => {
  const h = bind();
  const sm = mem();
  const d1 = registerStateFlowModule(sm, notes());
  d1();
  d1();
  assert(h.calls.catalog(env(sm)).modules.length === 0, "disposed");
  registerStateFlowModule(sm, notes({ schemaVersion: 2 }));
  d1();
  const c = h.calls.catalog(env(sm));
  assert(c.modules.length === 1 && c.modules[0].schemaVersion === 2, JSON.stringify(c));
  retire(h);
});

check("disposer cannot revoke another host generation", () => {
  const h1 = bind();
  const sm = mem();
  const d1 = registerStateFlowModule(sm, notes());
  retire(h1);
  const h2 = bind();
  registerStateFlowModule(sm, notes());
  d1();
  assert(h2.calls.catalog(env(sm)).modules.length === 1, "h2 kept its registration");
  retire(h2);
});

check("catalog change aborts old signals and fences queued old calls", async () => {
  const h = bind();
  const sm = mem();
  let seen;
  registerStateFlowModule(sm, notes({
    captureInput: (src, signal) => new Promise((resolve) => {
      seen = signal;
      signal.addEventListener("abort", () => resolve({ value: 1, assertCurrent() {} }));
    }),
  }));
  const t = tok(h, sm);
  const pending = h.asyncCalls.captureInput(env(sm), t, "x_acme_notes", { mode: "active", owner: "session" });
  await new Promise((r) => setTimeout(r, 10));
  registerStateFlowModule(sm, notes({ id: "x_later" }));
  assert(seen?.aborted, "old catalog signal aborted");
  const e = await throwsLike(() => pending, /revoked catalog/);
  assert(e.code === -32020, "code " + e.code);
  const e2 = await throwsLike(() => h.calls.validate(env(sm), t, "x_acme_notes", { entries: [] }), /revoked catalog/);
  assert(e2.code === -32020, "queued old call fenced");
  retire(h);
});

check("equal-id re-registration fences calls of the old registration", async () => {
  const h = bind();
  const sm = mem();
  const d = registerStateFlowModule(sm, notes());
  const t = tok(h, sm);
  d();
  registerStateFlowModule(sm, notes());
  await throwsLike(() => h.calls.validate(env(sm), t, "x_acme_notes", { entries: [] }), /revoked catalog/);
  retire(h);
});

check("native identity check fences manager reuse for another session", async () => {
  const h = bind();
  const sm = mem();
  const d = registerStateFlowModule(sm, notes());
  const t = tok(h, sm);
  sm.newSession();
  const c = h.calls.catalog(env(sm));
  assert(c.modules.length === 0, "reused manager starts empty: " + JSON.stringify(c));
  await throwsLike(() => h.calls.validate(env(sm), t, "x_acme_notes", { entries: [] }), /revoked catalog/);
  registerStateFlowModule(sm, notes());
  d();
  assert(h.calls.catalog(env(sm)).modules.length === 1, "old disposer did not revoke the new session's registration");
  retire(h);
});

check("competing ownership of a manager fails explicitly until the owner retires", async () => {
  const h1 = bind();
  const sm = mem();
  registerStateFlowModule(sm, notes());
  const h2 = createHost({}, { name: "stateflow" });
  await throwsLike(() => h2.register(sm, notes({ id: "x_two" })), /owned by another State Flow host/);
  retire(h1);
  h2.register(sm, notes({ id: "x_two" }));
  assert(h2.calls.catalog(env(sm)).modules.length === 1, "taken over after retirement");
  h2.retire();
});

check("host retirement removes only its own binding before signalling cancellation", async () => {
  const h1 = bind();
  const sm = mem();
  let signal;
  let boundAtAbort;
  registerStateFlowModule(sm, notes({
    produce: (c, f, s) => new Promise((resolve) => {
      signal = s;
      s.addEventListener("abort", () => {
        boundAtAbort = g[SYM];
        resolve(undefined);
      });
    }),
  }));
  const pending = h1.asyncCalls.produce(env(sm), tok(h1, sm), "x_acme_notes", null, { mode: "active", owner: "session" });
  await new Promise((r) => setTimeout(r, 10));
  const h2 = createHost({}, { name: "stateflow" });
  g[SYM] = h2; // a newer host is bound
  retire(h1);
  assert(g[SYM] === h2, "retirement removed another host's binding");
  assert(signal?.aborted && boundAtAbort === h2, "signal after unbinding");
  await throwsLike(() => pending, /retired/);
  const h3 = bind();
  retire(h3);
  assert(g[SYM] === undefined, "own binding removed");
  await throwsLike(() => h1.register(mem(), notes()), /retired/);
  h2.retire();
});

check("snapshots capture immutable policy, callback identities and definition order", () => {
  const h = bind();
  const sm = mem();
  const m = notes();
  registerStateFlowModule(sm, m);
  registerStateFlowModule(sm, notes({ id: "x_b" }));
  registerStateFlowModule(sm, notes({ id: "x_a" }));
  m.validate = () => false;
  m.immutable = true;
  m.schemaVersion = 9;
  const c = h.calls.catalog(env(sm));
  assert(c.modules.map((x) => x.id).join() === "x_acme_notes,x_b,x_a", "order " + c.modules.map((x) => x.id));
  assert(!c.modules[0].immutable && c.modules[0].schemaVersion === 1 && Object.isFrozen(c.modules[0]), "policy snapshot");
  assert(h.calls.validate(env(sm), tok(h, sm), "x_acme_notes", { entries: [] }) === true, "original validate kept");
  retire(h);
});

check("synchronous callbacks: promises, boolean receipts, missing receipts refused", async () => {
  const h = bind();
  const sm = mem();
  registerStateFlowModule(sm, notes({
    context: () => Promise.resolve([]),
    validate: () => Promise.resolve(true),
    captureInput: () => ({ value: { n: 1 }, assertCurrent: () => true }),
  }));
  registerStateFlowModule(sm, notes({ id: "x_nor", captureInput: () => ({ value: 1 }) }));
  const t = tok(h, sm);
  const frame = { mode: "active", owner: "session" };
  const e1 = await throwsLike(() => h.calls.context(env(sm), t, "x_acme_notes", null, frame), /returned a promise/);
  assert(e1.code === -32021, "context code");
  await throwsLike(() => h.calls.validate(env(sm), t, "x_acme_notes", {}), /returned a promise/);
  const got = await h.asyncCalls.captureInput(env(sm), t, "x_acme_notes", frame);
  assert(got.value.n === 1 && got.receipt > 0, JSON.stringify(got));
  await throwsLike(() => h.calls.assertCurrent(env(sm), t, got.receipt), /boolean result is rejected/);
  await throwsLike(() => h.calls.assertCurrent(env(sm), t, 999999), /receipt is not current/);
  await throwsLike(() => h.asyncCalls.captureInput(env(sm), t, "x_nor", frame), /must return \{value, assertCurrent\}/);
  retire(h);
});

check("Go-native ids are reserved", async () => {
  fs.writeFileSync(path.join(tmp, "native-modules.json"), JSON.stringify({ ids: ["x_go_notes"] }));
  const h = bind({ name: "stateflow", dir: tmp });
  await throwsLike(() => registerStateFlowModule(mem(), notes({ id: "x_go_notes" })), /Go-native module/);
  retire(h);
});

check("refused registrations are listed for the session until the id registers", async () => {
  const h = bind();
  const sm = mem();
  registerStateFlowModule(sm, notes());
  await throwsLike(() => registerStateFlowModule(sm, notes()), /already registered/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "x_b", apiVersion: 2 })), /apiVersion 2/);
  await throwsLike(() => registerStateFlowModule(sm, notes({ id: "x_b", apiVersion: 2 })), /apiVersion 2/);
  await throwsLike(() => registerStateFlowModule({}, notes({ id: "x_e" })), /must be ctx.sessionManager/);
  let c = h.calls.catalog(env(sm));
  assert(c.modules.length === 1 && c.refused.length === 2 && /x_acme_notes is already registered/.test(c.refused[0]) && /x_b: apiVersion 2/.test(c.refused[1]),
    "two refusals, each once: " + JSON.stringify(c));
  assert(h.calls.catalog(env(mem())).refused.length === 0, "another manager has none");
  registerStateFlowModule(sm, notes({ id: "x_b" }));
  c = h.calls.catalog(env(sm));
  assert(c.refused.length === 1 && !/x_b/.test(c.refused[0]), "x_b registered: its refusal is gone: " + JSON.stringify(c.refused));
  sm.newSession();
  assert(h.calls.catalog(env(sm)).refused.length === 0, "a new session starts without refusals");
  retire(h);
});

for (const [name, f] of checks) {
  try {
    await f();
    console.log("OK " + name);
  } catch (e) {
    console.log("FAIL " + name + ": " + (e?.message ?? e));
  }
}
console.log("DONE");
