"use strict";
// Midcompact web workbench (reference §5.6). Reads the injected ReviewState,
// edits the plan through the workbench API only; there is no commit here.
(() => {
  const $ = (id) => document.getElementById(id);
  let state = JSON.parse($("state").textContent);
  let current = null; // selected range id (review)
  let readOnly = false;
  let removeArmed = 0;

  const fmtTok = (n) => {
    const trim = (x) => x.toFixed(1).replace(/\.0$/, "");
    if (n >= 1e6) return trim(n / 1e6) + "M";
    if (n >= 1e3) return trim(n / 1e3) + "k";
    return String(Math.round(n));
  };
  // change: a saving as "−N", growth (a summary longer than its original)
  // as "+N".
  const change = (saved) => (saved >= 0 ? "−" : "+") + fmtTok(Math.abs(saved));
  const mid = (r) => (r[0] + r[1]) / 2;
  // est: display only, never gates anything.
  const estimate = (n, w, i) => {
    const e = state.est;
    return {
      point: Math.round(n * mid(e.narrowTokPerChar) + w * mid(e.wideTokPerChar) + i * mid(e.imageTok)),
      low: Math.round(n * e.narrowTokPerChar[0] + w * e.wideTokPerChar[0] + i * e.imageTok[0]),
      high: Math.round(n * e.narrowTokPerChar[1] + w * e.wideTokPerChar[1] + i * e.imageTok[1]),
    };
  };
  // Char classes as the payload counts them: code points ≤ 0x7F are narrow.
  const classes = (text) => {
    let narrow = 0, wide = 0;
    for (const ch of text) { if (ch.codePointAt(0) <= 0x7f) narrow++; else wide++; }
    return { narrow, wide };
  };
  const el = (tag, props, ...kids) => {
    const n = document.createElement(tag);
    Object.assign(n, props || {});
    for (const k of kids) n.append(k);
    return n;
  };

  async function api(method, path, body) {
    const init = { method, credentials: "same-origin", headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  }

  function selectedAtoms() {
    if (state.view === "selection") {
      return [...document.querySelectorAll("#selection-list input[type=checkbox]:checked")]
        .map((c) => state.atoms[Number(c.dataset.index)]);
    }
    return state.atoms.filter((a) => a.owningRangeId);
  }

  function renderStrip() {
    const atoms = selectedAtoms();
    const total = state.atoms.reduce((s, a) => s + a.contentChars, 0);
    const chars = atoms.reduce((s, a) => s + a.contentChars, 0);
    const pct = total ? Math.round((chars / total) * 1000) / 10 : 0;
    const pending = state.draft.ranges.filter((r) => !r.summary).length;
    $("strip").textContent = state.view === "review"
      ? `${state.draft.ranges.length} range(s) · ${atoms.length} of ${state.atoms.length} atoms · −${chars} chars (−${pct}%) · ${pending} pending`
      : `Selected ${atoms.length}/${state.atoms.length} atoms · ${chars}/${total} chars (${pct}% of anchor)`;
    renderBand(atoms);
  }

  function renderBand(atoms) {
    const t = state.telemetry;
    const now = t.anchorUsage && t.anchorUsage.tokens;
    const win = t.contextWindow;
    if (typeof now !== "number" || typeof win !== "number" || !win) {
      $("band").textContent = "Projection: Pi-reported usage unavailable — the projection needs it";
      return;
    }
    const sum = (f) => atoms.reduce((s, a) => s + f(a), 0);
    const removed = estimate(sum((a) => a.narrowChars), sum((a) => a.wideChars), sum((a) => a.imageCount));
    let added = { point: 0, low: 0, high: 0 };
    if (state.view === "review") {
      for (const r of state.draft.ranges) {
        let n = r.replacementNarrowChars, w = r.replacementWideChars;
        if (r.id === current) { // unsaved edits move the estimate live
          for (const [field, now] of [["summary", $("summary").value.trim()], ["topic", $("topic").value.trim()]]) {
            const was = classes(r[field] || ""), is = classes(now);
            n += is.narrow - was.narrow;
            w += is.wide - was.wide;
          }
        }
        const e = estimate(n, w, 0);
        added = { point: added.point + e.point, low: added.low + e.low, high: added.high + e.high };
      }
    }
    const post = {
      point: Math.max(0, now - removed.point + added.point),
      low: now - removed.high + added.low,
      high: now - removed.low + added.high,
    };
    const spread = post.point ? Math.round((Math.max(post.point - post.low, post.high - post.point) / post.point) * 100) : 0;
    const pct = Math.round((post.point / win) * 1000) / 10;
    const note = state.view === "selection" ? " · future summaries are not included" : "";
    $("band").textContent = `Projection (est.): now ${fmtTok(now)} / ${fmtTok(win)} → after commit ≈${fmtTok(post.point)} tok · ${pct}% ${change(now - post.low)} … ${change(now - post.high)} tok (est. ±${spread}%)${note}`;
  }

  function atomLine(a) {
    const bits = [a.ref, a.kind, `${a.contentChars} chars`];
    if (a.imageCount) bits.push(`${a.imageCount} image(s)`);
    if (a.toolNames.length) bits.push(a.toolNames.join(", "));
    if (a.owningRangeId) bits.push(`in ${a.owningRangeId}`);
    return bits.join(" · ");
  }
  const isProtected = (a) => !a.compressible || a.kind === "compressed";

  function renderSelection() {
    const list = $("selection-list");
    list.replaceChildren();
    let group = null;
    for (const a of state.atoms) {
      if (a.groupRef !== group) {
        group = a.groupRef;
        const g = a.groupRef;
        const b = el("button", { type: "button", textContent: `Select group ${g}` });
        b.dataset.group = g;
        b.addEventListener("click", () => toggleGroup(g));
        list.append(el("li", { className: "group" }, el("h3", { textContent: `${g} · ${a.groupLabel}` }), b));
      }
      const li = el("li");
      if (isProtected(a)) {
        li.append(el("span", { textContent: `🔒 can't compress · ${atomLine(a)}` }));
      } else {
        const id = `sel-${a.ref}`;
        const box = el("input", { type: "checkbox", id, checked: Boolean(a.owningRangeId) });
        box.dataset.ref = a.ref;
        box.dataset.index = String(a.index);
        box.addEventListener("change", renderStrip);
        li.append(box, " ", el("label", { htmlFor: id, textContent: atomLine(a) }));
      }
      li.append(el("span", { className: "preview", textContent: a.preview }));
      list.append(li);
    }
  }

  // toggleGroup selects every compressible atom of a group, or clears them
  // when all are selected already (G).
  function toggleGroup(g) {
    const boxes = state.atoms.filter((a) => a.groupRef === g).map((a) => document.getElementById(`sel-${a.ref}`)).filter(Boolean);
    const all = boxes.every((b) => b.checked);
    for (const b of boxes) b.checked = !all;
    renderStrip();
  }

  function selectionSpans() {
    const spans = [];
    let run = null;
    for (const a of state.atoms) {
      const box = document.getElementById(`sel-${a.ref}`);
      if (box && box.checked) {
        if (run) run.endRef = a.ref; else run = { startRef: a.ref, endRef: a.ref };
      } else if (run) { spans.push(run); run = null; }
    }
    if (run) spans.push(run);
    return spans;
  }

  function renderReview() {
    const list = $("ranges");
    list.replaceChildren();
    if (!state.draft.ranges.some((r) => r.id === current)) current = state.draft.ranges.length ? state.draft.ranges[0].id : null;
    for (const r of state.draft.ranges) {
      const b = el("button", { type: "button", textContent: `${r.id} ${r.startRef}→${r.endRef} · ${r.summary ? "summarized" : "pending summary"}${r.topic ? " · " + r.topic : ""}` });
      b.dataset.range = r.id;
      b.setAttribute("aria-current", String(r.id === current));
      b.addEventListener("click", () => { current = r.id; renderReview(); $("summary").focus(); });
      list.append(el("li", {}, b));
    }
    if (!state.draft.ranges.length) list.append(el("li", { textContent: "The plan has no ranges." }));
    const r = state.draft.ranges.find((x) => x.id === current);
    $("editor-heading").textContent = r ? `Range ${r.id}: ${r.startRef} → ${r.endRef} (${r.atomCount} atoms, ${r.originalContentChars} chars)` : "No range";
    $("topic").value = r ? r.topic || "" : "";
    $("summary").value = r ? r.summary : "";
    for (const id of ["topic", "summary", "save", "remove"]) $(id).disabled = readOnly || !r;
    $("remove").textContent = "Remove";
    removeArmed = 0;
    renderTimeline();
  }

  // The review timeline: Raw (every atom) or Projected (each range folded
  // into its summary card), filtered by policy and text.
  function renderTimeline() {
    const tl = $("timeline");
    tl.replaceChildren();
    const projected = $("projected").getAttribute("aria-pressed") === "true";
    const policy = $("policy").value;
    const needle = $("filter").value.trim().toLowerCase();
    const folded = new Set();
    for (const a of state.atoms) {
      if (policy === "compressed" && !a.owningRangeId) continue;
      if (policy === "kept" && a.owningRangeId) continue;
      if (needle && !`${a.ref} ${a.kind} ${a.preview}`.toLowerCase().includes(needle)) continue;
      if (projected && a.owningRangeId) {
        if (folded.has(a.owningRangeId)) continue;
        folded.add(a.owningRangeId);
        const r = state.draft.ranges.find((x) => x.id === a.owningRangeId);
        const pending = !r.summary;
        const card = el("li", { className: pending ? "card pending" : "card" },
          el("span", { textContent: `${r.id} ${r.startRef}→${r.endRef} · ${r.atomCount} atoms · ${r.originalContentChars} → ${r.replacementContentChars} chars${r.topic ? " · " + r.topic : ""}` }),
          el("span", { className: pending ? "preview pending" : "preview", textContent: pending ? "Pending summary: commit will refuse this range." : r.summary }));
        card.dataset.card = r.id;
        tl.append(card);
        continue;
      }
      const b = el("button", { type: "button", textContent: `Original ${a.ref}` });
      b.dataset.original = a.ref;
      b.disabled = readOnly;
      b.addEventListener("click", () => openDrawer(a.ref));
      const label = isProtected(a) ? `can't compress · ${atomLine(a)}` : a.owningRangeId ? atomLine(a) : `KEEP · ${atomLine(a)}`;
      tl.append(el("li", {}, el("span", { textContent: label + " " }), b, el("span", { className: "preview", textContent: a.preview })));
    }
    if (!tl.childElementCount) tl.append(el("li", { textContent: "No atoms match." }));
  }

  async function openDrawer(ref) {
    $("drawer-heading").textContent = `Original text of ${ref}`;
    $("drawer-text").textContent = "Loading…";
    $("drawer").showModal();
    try {
      const a = await api("GET", `/api/atom/${encodeURIComponent(ref)}`);
      $("drawer-text").textContent = a.fullText;
    } catch (e) {
      $("drawer-text").textContent = e.message;
    }
  }

  function render() {
    $("title").textContent = state.view === "review" ? "Midcompact Review" : "Midcompact Selection";
    $("selection-view").hidden = state.view !== "selection";
    $("review-view").hidden = state.view !== "review";
    if (state.view === "review") renderReview(); else renderSelection();
    renderStrip();
    if (readOnly) lock();
  }

  function status(id, text) { $(id).textContent = text; }

  async function saveSelection() {
    try {
      state = await api("POST", "/api/selection", { spans: selectionSpans(), keepRefs: [] });
      render();
      status("selection-status", `Plan saved (revision ${state.draft.revision}).`);
    } catch (e) { status("selection-status", `Selection could not be saved: ${e.message}`); }
  }

  async function saveRange() {
    const r = state.draft.ranges.find((x) => x.id === current);
    if (!r) return;
    const topic = $("topic").value, summary = $("summary").value;
    const id = encodeURIComponent(r.id);
    try {
      if (topic.trim() !== (r.topic || "")) state = await api("POST", `/api/range/${id}/edit-topic`, { value: topic });
      if (summary.trim() !== r.summary) state = await api("POST", `/api/range/${id}/edit-summary`, { value: summary });
      render();
      status("editor-status", `Saved ${r.id} (revision ${state.draft.revision}).`);
    } catch (e) { status("editor-status", `Not saved: ${e.message}`); }
  }

  async function removeRange() {
    if (!current) return;
    if (Date.now() - removeArmed > 4000) {
      removeArmed = Date.now();
      $("remove").textContent = `Confirm remove ${current}`;
      return;
    }
    const id = current;
    try {
      state = await api("POST", `/api/range/${encodeURIComponent(id)}/remove`);
      render();
      status("editor-status", `Removed ${id} (revision ${state.draft.revision}).`);
    } catch (e) { status("editor-status", `Not removed: ${e.message}`); }
  }

  function lock() {
    readOnly = true;
    for (const n of document.querySelectorAll("main button:not(#drawer-close):not(#projected), main input:not(#filter), main textarea, #close, [data-original]")) n.disabled = true;
  }

  function ended(text) {
    $("banner").textContent = text;
    $("banner").hidden = false;
    lock();
    if (live) live.close();
  }

  async function closeWorkbench() {
    try {
      await api("POST", "/api/close");
      ended("Workbench closed. The saved plan is kept; you can close this tab.");
    } catch (e) { ended(`Session closed: ${e.message}`); }
  }

  function askClose() {
    const pending = state.draft.ranges.filter((r) => !r.summary).map((r) => r.id);
    if (state.view !== "review" || !pending.length) { closeWorkbench(); return; }
    $("close-pending").textContent = `Pending summaries: ${pending.join(", ")}. Commit will refuse them.`;
    $("close-dialog").showModal();
  }

  $("projected").addEventListener("click", () => {
    const on = $("projected").getAttribute("aria-pressed") !== "true";
    $("projected").setAttribute("aria-pressed", String(on));
    renderTimeline();
  });
  $("policy").addEventListener("change", renderTimeline);
  $("filter").addEventListener("input", renderTimeline);
  $("summary").addEventListener("input", renderStrip);
  $("topic").addEventListener("input", renderStrip);
  $("save-selection").addEventListener("click", saveSelection);
  $("save").addEventListener("click", saveRange);
  $("remove").addEventListener("click", removeRange);
  $("close").addEventListener("click", askClose);
  $("drawer-close").addEventListener("click", () => $("drawer").close());
  $("close-confirm").addEventListener("click", () => { $("close-dialog").close(); closeWorkbench(); });
  $("close-cancel").addEventListener("click", () => $("close-dialog").close());
  document.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLSelectElement;
    if (e.key === "/" && !typing && state.view === "review") {
      e.preventDefault();
      $("filter").focus();
      return;
    }
    if (state.view === "selection" && (e.key === "g" || e.key === "G") && e.target.dataset && e.target.dataset.index !== undefined) {
      e.preventDefault();
      toggleGroup(state.atoms[Number(e.target.dataset.index)].groupRef);
      return;
    }
    if ((e.ctrlKey || e.metaKey) && e.key === "s") {
      e.preventDefault();
      if (state.view === "review") saveRange(); else saveSelection();
    }
  });

  // Liveness: the page's lifetime keeps the workbench alive; a stream in
  // error for more than 4 s means the session closed.
  let live = null;
  let lostTimer = 0;
  if (typeof EventSource === "function") {
    live = new EventSource("/api/liveness");
    live.addEventListener("open", () => { clearTimeout(lostTimer); lostTimer = 0; document.body.dataset.live = "open"; });
    live.addEventListener("error", () => {
      document.body.dataset.live = "error";
      if (!lostTimer && !readOnly) lostTimer = setTimeout(() => ended("Session closed: this page is read-only now."), 4000);
    });
  }
  render();
  document.body.dataset.ready = "true";
})();
