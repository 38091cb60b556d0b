// Test oracle for midcompact: answers one JSON request per stdin line with
// one JSON line on stdout, using Node's own JSON.stringify and Pi 1.6.0's
// buildSessionContext (imported from the path given as argv[2]).
//   {"op":"key","message":{...}}            -> {"key":"role:ts:hash"}
//   {"op":"context","entries":[...],"leaf":"id"} -> {"messages":[...]}
//   {"op":"atoms","entries":[...],"leaf":"id","now":0} -> {"atoms":[...]} (atoms.mjs)
//   {"op":"stringify","message":{...}}      -> {"text":"JSON.stringify(message)"}
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { makeAtoms } from "./atoms.mjs";

const { buildSessionContext } = await import(pathToFileURL(process.argv[2]).href);

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys(v[k]);
    return o;
  }
  return v;
}

function fnv1a64(s) {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(s)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

function messageKey(m) {
  const ts = typeof m.timestamp === "number" ? m.timestamp : 0;
  return `${m.role}:${ts}:${fnv1a64(JSON.stringify(sortKeys(m)))}`;
}

const atoms = makeAtoms(buildSessionContext, messageKey);

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  const req = JSON.parse(line);
  let out;
  try {
    if (req.op === "key") out = { key: messageKey(req.message) };
    else if (req.op === "context") {
      const byId = new Map(req.entries.map((e) => [e.id, e]));
      out = { messages: buildSessionContext(req.entries, req.leaf, byId).messages };
    } else if (req.op === "stringify") out = { text: JSON.stringify(req.message) };
    else if (req.op === "atoms") out = { atoms: atoms(req.entries, req.leaf, req.now ?? 0) };
    else out = { error: "unknown op" };
  } catch (e) {
    out = { error: String(e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
