// Code generated from host.ts by Node's type stripping (go generate ./stateflow/extension); DO NOT EDIT.
// State Flow module host (seed 003 "Public entry and lifecycle"): created by
// the State Flow bridge's factory (piext HostSpec) and bound on
// globalThis[Symbol.for("pikit.stateflow.host/1")]; modules.ts registers
// here, Go calls the registered callbacks through calls/asyncCalls.
// Written by `pikit ext install stateflow`; do not edit.
import * as fs from "node:fs";
import * as path from "node:path";

const OWNERS = Symbol.for("pikit.stateflow.owners/1"); // WeakMap<manager, host>
const HOSTS = Symbol.for("pikit.stateflow.hosts/1"); // host generation counter
const ID = /^x_[a-z][a-z0-9_]*$/;
const MAX_RECEIPTS = 1024;
const MAX_REFUSALS = 16; // registration refusals kept per session

// Error codes Go maps (stateflow/extension modules_js.go).
const REVOKED = -32020; // catalog revoked, host retired, manager reused
const REFUSED = -32021; // a callback's result is not admitted
const FAILED = -32022; // a callback threw

function fail(code        , message        )        {
  const e      = new Error(message);
  e.code = code;
  throw e;
}

function isThenable(v     )          {
  return v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function";
}

function swallow(v     ) {
  try {
    v.then(undefined, () => {});
  } catch {}
}

function plainObject(v     )          {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// detach copies a JSON value; undefined stays undefined, anything else that
// is not JSON is refused.
function detach(v     , what        )      {
  if (v === undefined) return undefined;
  let s                    ;
  try {
    s = JSON.stringify(v);
  } catch (e     ) {
    fail(REFUSED, `${what} is not a JSON value: ${e?.message ?? e}`);
  }
  if (s === undefined) fail(REFUSED, `${what} is not a JSON value`);
  return JSON.parse(s);
}

                                             

function identityOf(sm     )           {
  return { id: String(sm.getSessionId?.() ?? ""), file: String(sm.getSessionFile?.() ?? "") };
}

              
                
             
                                                                                                                            
                            
                                   
                                                   
                                                      
  

                
                     
                     
                   
                       
                                   
  

export default function createHost(pi     , opts                                ) {
  const g      = globalThis;
  const hostGen         = (g[HOSTS] = (g[HOSTS] ?? 0) + 1);
  const owners                       = g[OWNERS] ?? (g[OWNERS] = new WeakMap());
  const catalogs = new WeakMap                 ();
  const retireCtl = new AbortController();
  let nextGeneration = 0;
  let nextReceipt = 0;
  // Ids of Go-native modules (native-modules.json beside this file): a
  // companion may not register one of them.
  let reserved           = [];
  try {
    if (opts?.dir) reserved = JSON.parse(fs.readFileSync(path.join(opts.dir, "native-modules.json"), "utf8")).ids ?? [];
  } catch {}

  const host      = {};
  // Model and thinking-level changes, counted here as Pi emits them (a Go
  // hook would queue behind the context hook that runs producers): a
  // counter, not a value, so A→B→A still revokes.
  let modelChanges = 0;
  if (typeof pi?.on === "function") {
    pi.on("model_select", () => {
      modelChanges++;
    });
    pi.on("thinking_level_select", () => {
      modelChanges++;
    });
  }

  // catalogOf returns the manager's live catalog, fencing one whose manager
  // now serves another session (native identity check).
  const catalogOf = (sm        , create         )                      => {
    let c = catalogs.get(sm);
    if (c) {
      const now = identityOf(sm);
      if (now.id !== c.identity.id || now.file !== c.identity.file) {
        c.ctl.abort();
        c.receipts.clear();
        catalogs.delete(sm);
        c = undefined;
      }
    }
    if (!c && create) {
      c = { identity: identityOf(sm), generation: ++nextGeneration, entries: [], ctl: new AbortController(), receipts: new Map() };
      catalogs.set(sm, c);
    }
    return c;
  };

  // change replaces a catalog's generation: old signals abort, old receipts
  // and queued calls are fenced.
  const change = (c         ) => {
    c.ctl.abort();
    c.ctl = new AbortController();
    c.receipts.clear();
    c.generation = ++nextGeneration;
  };

  // Registration refusals per manager, for the session it served when they
  // happened (a new session starts a new list): /state-flow-status shows
  // them, since a companion's throw in session_start is otherwise a stack
  // trace on a fresh session and nothing on a resumed one.
  const refusals = new WeakMap                                                                         ();
  const refusalsOf = (sm     ) => {
    const identity = identityOf(sm);
    let r = refusals.get(sm);
    if (!r || r.identity.id !== identity.id || r.identity.file !== identity.file) {
      r = { identity, list: [] };
      refusals.set(sm, r);
    }
    return r;
  };
  const refuse = (sm     , module     , e     ) => {
    if (sm === null || typeof sm !== "object" || typeof sm.getSessionId !== "function") return; // no session to report it in
    const id = typeof module?.id === "string" ? module.id.slice(0, 80) : "";
    const message = String(e?.message ?? e).slice(0, 300);
    const r = refusalsOf(sm);
    r.list = r.list.filter((x) => x.message !== message);
    r.list.push({ id, message });
    if (r.list.length > MAX_REFUSALS) r.list.shift();
  };

  host.register = (sm     , module     )               => {
    try {
      const dispose = register(sm, module);
      const r = refusals.get(sm);
      if (r) r.list = r.list.filter((x) => x.id !== module.id); // registered now
      return dispose;
    } catch (e) {
      refuse(sm, module, e);
      throw e;
    }
  };

  const register = (sm     , module     )               => {
    if (retireCtl.signal.aborted) fail(REVOKED, "State Flow module host was retired; register again from the next session_start");
    if (sm === null || typeof sm !== "object" || typeof sm.getSessionId !== "function") {
      throw new TypeError("registerStateFlowModule: the first argument must be ctx.sessionManager");
    }
    const owner = owners.get(sm);
    if (owner && owner !== host && !owner.retired) {
      throw new Error("registerStateFlowModule: this session manager is owned by another State Flow host");
    }
    if (module === null || typeof module !== "object") throw new TypeError("registerStateFlowModule: the module must be an object");
    const id = module.id;
    if (typeof id !== "string" || !ID.test(id)) throw new TypeError(`registerStateFlowModule: id ${JSON.stringify(String(id)).slice(0, 80)} must match x_[a-z][a-z0-9_]*`);
    if (module.apiVersion !== 1) throw new Error(`registerStateFlowModule: ${id}: apiVersion ${String(module.apiVersion).slice(0, 20)} is not supported (this host speaks 1)`);
    const sv = module.schemaVersion;
    if (typeof sv !== "number" || !Number.isSafeInteger(sv) || sv < 1) throw new TypeError(`registerStateFlowModule: ${id}: schemaVersion must be a positive safe integer`);
    if (typeof module.immutable !== "boolean") throw new TypeError(`registerStateFlowModule: ${id}: immutable must be a boolean`);
    if (typeof module.validate !== "function" || typeof module.context !== "function") throw new TypeError(`registerStateFlowModule: ${id}: validate and context must be functions`);
    for (const k of ["captureInput", "produce"]) {
      if (module[k] !== undefined && typeof module[k] !== "function") throw new TypeError(`registerStateFlowModule: ${id}: ${k} must be a function when present`);
    }
    if (reserved.includes(id)) throw new Error(`registerStateFlowModule: ${id} is already registered (a Go-native module of this State Flow)`);
    const c = catalogOf(sm, true) ;
    if (c.entries.some((e) => e.id === id)) throw new Error(`registerStateFlowModule: ${id} is already registered for this session`);
    // Snapshot: policy and callback identities as they are now, bound to
    // the definition object.
    const entry        = {
      token: {},
      id,
      policy: Object.freeze({ id, apiVersion: 1, schemaVersion: sv, immutable: module.immutable, captureInput: typeof module.captureInput === "function", produce: typeof module.produce === "function" }),
      validate: module.validate.bind(module),
      context: module.context.bind(module),
      captureInput: typeof module.captureInput === "function" ? module.captureInput.bind(module) : undefined,
      produce: typeof module.produce === "function" ? module.produce.bind(module) : undefined,
    };
    owners.set(sm, host);
    c.entries = [...c.entries, entry];
    change(c);
    let disposed = false;
    return () => {
      if (disposed) return;
      disposed = true;
      if (retireCtl.signal.aborted || catalogs.get(sm) !== c) return; // another host generation or a fenced catalog
      const i = c.entries.indexOf(entry);
      if (i < 0) return;
      c.entries = c.entries.filter((e) => e !== entry);
      change(c);
    };
  };

  // current resolves the catalog a Go call names: same host generation,
  // same catalog generation, manager still serving the same session.
  const current = (env     , token     )          => {
    if (retireCtl.signal.aborted) fail(REVOKED, "State Flow module host was retired");
    const c = catalogOf(env.sessionManager, false);
    if (!c || !token || token.host !== hostGen || token.generation !== c.generation) fail(REVOKED, "State Flow module catalog changed; the call belongs to a revoked catalog");
    return c;
  };
  const entryOf = (c         , id        )        => c.entries.find((e) => e.id === id) ?? fail(REVOKED, `State Flow module ${String(id).slice(0, 80)} is not registered`);
  const sync = (v     , what        ) => {
    if (isThenable(v)) {
      swallow(v);
      fail(REFUSED, `${what} returned a promise; it must be synchronous`);
    }
    return v;
  };
  const guarded = (f           , what        ) => {
    try {
      return f();
    } catch (e     ) {
      if (typeof e?.code === "number" && e.code <= -32020 && e.code >= -32022) throw e;
      fail(FAILED, `${what} threw: ${String(e?.message ?? e).slice(0, 500)}`);
    }
  };
  const frameOf = (f     ) => {
    const out      = { mode: f?.mode, owner: f?.owner };
    if (f?.conversation) out.conversation = f.conversation;
    if (typeof f?.prompt === "string") out.prompt = f.prompt;
    if (f?.input !== undefined && f?.input !== null) out.input = f.input;
    return out;
  };

  host.calls = {
    modelChanges() {
      return modelChanges;
    },
    // catalog: the manager's catalog snapshot in definition order, and the
    // registrations refused in its current session.
    catalog(env     ) {
      const c = retireCtl.signal.aborted ? undefined : catalogOf(env.sessionManager, false);
      const r = env.sessionManager ? refusals.get(env.sessionManager) : undefined;
      const now = env.sessionManager ? identityOf(env.sessionManager) : undefined;
      const refused = r && now && r.identity.id === now.id && r.identity.file === now.file ? r.list.map((x) => x.message) : [];
      return { host: hostGen, generation: c?.generation ?? 0, modules: c ? c.entries.map((e) => e.policy) : [], refused };
    },
    validate(env     , token     , id        , value     ) {
      const e = entryOf(current(env, token), id);
      const ok = sync(guarded(() => e.validate(value), `${id}.validate`), `${id}.validate`);
      return ok === true;
    },
    context(env     , token     , id        , content     , frame     ) {
      const e = entryOf(current(env, token), id);
      const out = sync(guarded(() => e.context(content ?? undefined, frameOf(frame)), `${id}.context`), `${id}.context`);
      if (!Array.isArray(out)) fail(REFUSED, `${id}.context must return an array of contributions`);
      return detach(out, `${id}.context result`);
    },
    assertCurrent(env     , token     , receipt        ) {
      const c = current(env, token);
      const f = c.receipts.get(receipt);
      if (!f) fail(REVOKED, "State Flow module input receipt is not current");
      const v = sync(guarded(() => f(), "assertCurrent"), "assertCurrent");
      if (v !== undefined) fail(REFUSED, "assertCurrent must throw or return nothing (a boolean result is rejected)");
      return null;
    },
    release(env     , token     , receipt        ) {
      catalogOf(env.sessionManager, false)?.receipts.delete(receipt);
      return null;
    },
  };
  host.asyncCalls = {
    async captureInput(env     , token     , id        , source     ) {
      const c = current(env, token);
      const e = entryOf(c, id);
      if (!e.captureInput) fail(REFUSED, `${id} has no captureInput`);
      const signal = AbortSignal.any([env.signal, c.ctl.signal, retireCtl.signal]);
      const got = await guarded(() => e.captureInput (Object.freeze({ mode: source?.mode, owner: source?.owner }), signal), `${id}.captureInput`);
      current(env, token);
      if (!plainObject(got) || typeof got.assertCurrent !== "function") fail(REFUSED, `${id}.captureInput must return {value, assertCurrent}`);
      const value = detach(got.value, `${id}.captureInput value`);
      const n = ++nextReceipt;
      if (c.receipts.size >= MAX_RECEIPTS) c.receipts.delete(c.receipts.keys().next().value );
      c.receipts.set(n, got.assertCurrent.bind(got));
      return { value: value ?? null, receipt: n };
    },
    async produce(env     , token     , id        , content     , frame     ) {
      const c = current(env, token);
      const e = entryOf(c, id);
      if (!e.produce) fail(REFUSED, `${id} has no produce`);
      const signal = AbortSignal.any([env.signal, c.ctl.signal, retireCtl.signal]);
      let out     ;
      try {
        out = await e.produce(content ?? undefined, frameOf(frame), signal);
      } catch (err     ) {
        fail(FAILED, `${id}.produce threw: ${String(err?.message ?? err).slice(0, 500)}`);
      }
      current(env, token);
      if (out === undefined) return { none: true };
      if (!plainObject(out)) fail(REFUSED, `${id}.produce must return a JSON object or undefined`);
      return { proposal: detach(out, `${id}.produce result`) };
    },
  };
  // retire: the bridge has removed the globalThis binding (only if it was
  // still this host); now every catalog signal is cancelled.
  host.retire = () => {
    host.retired = true;
    retireCtl.abort();
  };
  host.retired = false;
  return host;
}
