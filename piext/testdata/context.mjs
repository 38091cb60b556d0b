// context.mjs drives the installed bridge's context path without Pi (as
// harness.mjs does) and counts the bytes of every hook request the bridge
// writes to the sidecar. Run by context_bridge_test.go with Node 22.
//   node context.mjs <folder>/index.ts <mode>
// Prints result lines "KEY <json>" on stdout.
const [, , bridgePath, mode] = process.argv;
const keep = setInterval(() => {}, 1000);
const handlers = {};
const pi = { on: (e, h) => (handlers[e] ??= []).push(h), registerTool: () => {}, registerCommand: () => {}, appendEntry: () => {} };
let session = [];
const ctx = {
  hasUI: true,
  mode: "rpc",
  cwd: "/project",
  ui: { notify: () => {} },
  sessionManager: {
    getSessionId: () => "session-1",
    getSessionFile: () => undefined,
    getEntries: () => [],
    getLeafEntry: () => ({ type: "message" }),
    buildSessionContext: () => ({ messages: structuredClone(session), thinkingLevel: "off", model: null }),
  },
};
// Lines are written in order and the process exits once they are flushed
// (a pipe's writes are asynchronous: exiting on a timer can cut them).
const lines = [];
const out = (k, v) => lines.push(k + " " + JSON.stringify(v) + "\n");
// short stands for a long text: its length and whether Go edited it.
const short = (t) =>
  typeof t !== "string" || t.length <= 200 ? t : `<${t.length}${t.includes("CTXEDIT-SEEN-BY-GO") ? " CTXEDIT-SEEN-BY-GO" : t.includes("CTXEDIT") ? " CTXEDIT" : ""}>`;
const mod = await import(bridgePath);
mod.default(pi);
const sidecar = globalThis[Symbol.for("pikit.piext.probe")];
const emit = async (event, ev) => {
  let res;
  for (const h of handlers[event] ?? []) res = await h(ev, ctx);
  return res;
};
// sent: per request method, the bytes of each request written since the last take.
let sent = [];
const write = sidecar.write.bind(sidecar);
sidecar.write = (msg) => {
  if (msg.method) sent.push({ method: msg.method, bytes: JSON.stringify(msg).length });
  return write(msg);
};
const take = (method) => {
  const got = sent.filter((s) => s.method === method).map((s) => s.bytes);
  sent = [];
  return got;
};
// kept: per returned message, whether it is the very object Pi passed at
// that index (an unchanged message is handed back, not rebuilt).
const context = async (messages) => {
  const res = await emit("context", { type: "context", messages });
  return {
    texts: res?.messages?.map((m) => short(m.content?.[0]?.text ?? null)) ?? null,
    kept: res?.messages?.map((m, i) => m === messages[i]) ?? null,
    hookBytes: take("hook"),
  };
};
const big = (i, fill) => ({ role: "user", content: [{ type: "text", text: ("m" + i + " ").padEnd(60000, fill) }], timestamp: i });
const mid = (s, word) => s.slice(0, 30000) + word + s.slice(30000 + word.length);

if (mode === "samelength") {
  await emit("session_start", { reason: "startup" });
  const msgs = [big(1, "a"), big(2, "b"), big(3, "c")];
  const first = await context(structuredClone(msgs));
  const unchanged = await context(structuredClone(msgs));
  // The middle message changes in its middle, keeping its length.
  const edited = structuredClone(msgs);
  edited[1].content[0].text = mid(edited[1].content[0].text, "CTXEDIT");
  const second = await context(edited);
  // A later extension edits that call's objects in place, back to the
  // original text: the sidecar still holds the edited content, so the
  // original must be sent again, and then it is held.
  edited[1].content[0].text = msgs[1].content[0].text;
  const third = await context(structuredClone(msgs));
  const fourth = await context(structuredClone(msgs));
  out("SAMELENGTH", { first, unchanged, second, third, fourth });
} else if (mode === "warm") {
  session = [big(1, "a"), big(2, "b"), { role: "user", content: [{ type: "text", text: "warm CTXEDIT" }], timestamp: 3 }];
  await emit("session_start", { reason: "resume" });
  // The warm-up goes once the session has been quiet for a while: wait
  // until it was written, then for its answer.
  while (!sent.some((s) => s.method === "context/warm")) await new Promise((r) => setTimeout(r, 20));
  await sidecar.ctxCache?.warming;
  const warm = take("context/warm");
  // The first LLM call: the session's messages and a new prompt.
  const first = await context([...structuredClone(session), { role: "user", content: [{ type: "text", text: "new prompt" }], timestamp: 4 }]);
  out("WARM", { warm, first });
}
sidecar?.stop();
clearInterval(keep);
process.stdout.write(lines.join(""), () => process.exit(0));
