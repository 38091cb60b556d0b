// An independent atom oracle for midcompact (reference §2): the anchor
// snapshot of a session branch computed from the reference's rules in
// JavaScript, over Pi 1.6.0's own buildSessionContext, Node's
// JSON.stringify, String iteration (code points) and atob. It shares no
// code with the Go implementation; oracle.mjs serves it as op "atoms".

const SUMMARY_TYPE = "midcompact-summary";
const STATE_TYPE = "midcompact-state";

export function makeAtoms(buildSessionContext, messageKey) {
  // branchPath walks parentId from leaf to the root (root first).
  function branchPath(byId, leaf) {
    const path = [];
    for (let e = byId.get(leaf); e; e = e.parentId == null ? undefined : byId.get(e.parentId)) path.unshift(e);
    return path;
  }

  // latestState is the last midcompact-state entry on the path whose data
  // passes the shape check (reference §3.4).
  function latestState(path) {
    let state;
    for (const e of path) {
      if (e.type !== "custom" || e.customType !== STATE_TYPE) continue;
      const d = e.data;
      const ok = d && d.version === 1 && typeof d.createdAt === "string" && Array.isArray(d.blocks) &&
        d.blocks.every((b) => b && typeof b.id === "string" && typeof b.summary === "string" && Array.isArray(b.entryIds) && Array.isArray(b.messageKeys));
      if (ok) state = d;
    }
    return state;
  }

  // wrapper is the summary message replacing a block (reference §4.3, with
  // the package's v0.7 hint line).
  function wrapper(block, timestamp) {
    const head = block.topic ? `[Midcompact summary ${block.id}: ${block.topic}]` : `[Midcompact summary ${block.id}]`;
    const content = `${head}\n${block.summary}\n\nOriginal block: ${block.id}\n` +
      `Use midcompact(request={action:"recall_read", block:"${block.id}"}) if exact details are needed.`;
    const details = { blockId: block.id, originalApproxTokens: block.originalApproxTokens ?? 0 };
    if (block.topic) details.topic = block.topic;
    return { role: "custom", customType: SUMMARY_TYPE, display: true, content, details, timestamp };
  }

  // project replaces each block's first contiguous run of keys; overlapping
  // matches leave everything unchanged (reference §4.2).
  function project(messages, blocks, now) {
    const keys = messages.map(messageKey);
    const matches = [];
    blocks.forEach((b, bi) => {
      const run = b.messageKeys;
      if (run.length === 0) return;
      for (let i = 0; i + run.length <= keys.length; i++) {
        if (run.every((k, j) => keys[i + j] === k)) {
          matches.push({ start: i, end: i + run.length, bi });
          return;
        }
      }
    });
    matches.sort((a, b) => a.start - b.start);
    for (let i = 1; i < matches.length; i++) if (matches[i].start < matches[i - 1].end) return messages;
    const out = [];
    let at = 0;
    for (const m of matches) {
      out.push(...messages.slice(at, m.start));
      const ts = messages[m.start].timestamp;
      out.push(wrapper(blocks[m.bi], typeof ts === "number" ? ts : now));
      at = m.end;
    }
    out.push(...messages.slice(at));
    return out;
  }

  const codePoints = (s) => [...s].length;

  function payloadBytes(data) {
    if (typeof data !== "string") return 0;
    try {
      return atob(data).length;
    } catch {
      return 0;
    }
  }

  // metrics: content chars in code points, image count and payload bytes
  // (reference §2.5).
  function metrics(m) {
    let chars = 0, images = 0, bytes = 0;
    if (typeof m.content === "string") chars += codePoints(m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content) {
        if (!p || typeof p !== "object") continue;
        if (p.type === "text" && typeof p.text === "string") chars += codePoints(p.text);
        else if (p.type === "thinking" && typeof p.thinking === "string") chars += codePoints(p.thinking);
        else if (p.type === "toolCall") chars += codePoints(String(p.name ?? "")) + codePoints(JSON.stringify(p.arguments ?? {}));
        else if (p.type === "image") {
          images++;
          bytes += payloadBytes(p.data);
        }
      }
    }
    if (m.role === "bashExecution") chars += codePoints(String(m.command ?? "")) + codePoints(String(m.output ?? ""));
    if (m.role === "custom" && typeof m.summary === "string") chars += codePoints(m.summary);
    return { chars, images, bytes };
  }

  const toolCalls = (m) =>
    m.role === "assistant" && Array.isArray(m.content)
      ? m.content.filter((p) => p && p.type === "toolCall" && typeof p.id === "string" && typeof p.name === "string")
      : [];

  // atoms of the visible messages (reference §2.3).
  function buildAtoms(visible, entryIds) {
    const callsAt = new Map(); // call id → indexes of messages calling it
    const resultsAt = new Map(); // toolCallId → indexes of results
    visible.forEach((m, i) => {
      for (const c of toolCalls(m)) callsAt.set(c.id, [...(callsAt.get(c.id) ?? []), i]);
      if (m.role === "toolResult" && typeof m.toolCallId === "string") resultsAt.set(m.toolCallId, [...(resultsAt.get(m.toolCallId) ?? []), i]);
    });
    const atoms = [];
    const push = (from, to, kind, compressible, protocolClosed, toolProtocol) => {
      const ms = visible.slice(from, to);
      const a = {
        kind, compressible, protocolClosed,
        entryIds: entryIds.slice(from, to).filter((id) => id !== undefined),
        messageKeys: ms.map(messageKey),
        chars: 0, images: 0, bytes: 0,
      };
      for (const m of ms) {
        const x = metrics(m);
        a.chars += x.chars;
        a.images += x.images;
        a.bytes += x.bytes;
      }
      if (toolProtocol) a.toolProtocol = toolProtocol;
      atoms.push(a);
    };
    const hasIds = (from, to) => entryIds.slice(from, to).every((id) => id !== undefined);
    let i = 0;
    while (i < visible.length) {
      const m = visible[i];
      const calls = toolCalls(m);
      if (m.role === "custom" && m.customType === SUMMARY_TYPE) {
        push(i, i + 1, "compressed", false, true);
        i++;
      } else if (calls.length > 0) {
        const ids = calls.map((c) => c.id);
        const seen = new Set();
        let j = i + 1;
        while (j < visible.length && seen.size < new Set(ids).size) {
          const r = visible[j];
          if (r.role !== "toolResult" || !ids.includes(r.toolCallId)) break;
          seen.add(r.toolCallId);
          j++;
        }
        const ambiguous = new Set(ids).size !== ids.length || ids.some((id) =>
          callsAt.get(id).length > 1 || (resultsAt.get(id) ?? []).length > 1 || (resultsAt.get(id) ?? []).some((k) => k <= i || k >= j));
        if (ambiguous) push(i, j, "tool_exchange", false, false, "ambiguous");
        else if (ids.every((id) => seen.has(id))) push(i, j, "tool_exchange", hasIds(i, j), true, "closed");
        else push(i, j, "tool_exchange", hasIds(i, j), false, "abandoned");
        i = j;
      } else {
        const own = hasIds(i, i + 1);
        if (m.role === "assistant") push(i, i + 1, "assistant", own, true);
        else if (m.role === "toolResult") push(i, i + 1, "orphan_tool_result", false, false, "orphan");
        else if (m.role === "user") push(i, i + 1, "user", own, true);
        else if (m.role === "bashExecution") push(i, i + 1, "bash", own, true);
        else if (m.role === "custom") push(i, i + 1, "custom", false, true);
        else push(i, i + 1, "other", false, true);
        i++;
      }
    }
    return atoms.map((a, k) => ({
      ref: "a" + String(k + 1).padStart(4, "0"),
      kind: a.kind,
      entryIds: a.entryIds,
      messageKeys: a.messageKeys,
      compressible: a.compressible,
      protocolClosed: a.protocolClosed,
      protected: !a.compressible || a.kind === "compressed",
      contentChars: a.chars,
      imageCount: a.images,
      imagePayloadBytes: a.bytes,
      ...(a.toolProtocol ? { toolProtocol: a.toolProtocol } : {}),
    }));
  }

  // atoms of the snapshot anchored at leaf (reference §2.1, §2.2).
  return function atoms(entries, leaf, now) {
    const byId = new Map(entries.map((e) => [e.id, e]));
    const built = buildSessionContext(entries, leaf, byId).messages;
    const path = branchPath(byId, leaf);
    const state = latestState(path);
    const visible = state && state.blocks.length ? project(built, state.blocks, now) : built;
    const queues = new Map();
    for (const e of path) {
      if (e.type !== "message") continue;
      const k = messageKey(e.message);
      queues.set(k, [...(queues.get(k) ?? []), e.id]);
    }
    const ids = visible.map((m) => {
      const q = queues.get(messageKey(m));
      return q && q.length ? q.shift() : undefined;
    });
    return buildAtoms(visible, ids);
  };
}
