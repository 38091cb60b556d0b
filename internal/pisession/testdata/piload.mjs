// piload.mjs: loads session files with Pi's own loader (loadEntriesFromFile
// of the installed @earendil-works/pi-coding-agent) and prints, per file, one
// JSON line {"header": string|null, "entries": [string]}: JSON.stringify of
// the header and of each entry pisession keeps (objects that are not arrays
// and not of type "session"; Pi also keeps other truthy JSON values, which
// no entry id can reach). For a session it also prints, from Pi's
// SessionManager.open, "leaf" (getLeafId) and "branches": for each entry id,
// getBranch(id) as ids (null when parentIds loop, where getBranch would not
// return).
//
//   node piload.mjs <session-manager.js> <file>...
const [smPath, ...files] = process.argv.slice(2);
const sm = await import(smPath);
for (const f of files) {
  const all = sm.loadEntriesFromFile(f);
  const out = { header: null, entries: [] };
  if (all.length > 0) {
    out.header = JSON.stringify(all[0]);
    for (const e of all.slice(1)) {
      if (e !== null && typeof e === "object" && !Array.isArray(e) && e.type !== "session") out.entries.push(JSON.stringify(e));
    }
  }
  if (out.header !== null && all[0].type === "session" && all[0].version >= 3) {
    const m = sm.SessionManager.open(f);
    out.leaf = m.getLeafId() ?? null;
    out.branches = {};
    for (const e of m.getEntries()) {
      if (typeof e?.id !== "string" || e.id === "") continue;
      const seen = new Set();
      let cur = m.getEntry(e.id);
      let loops = false;
      while (cur) {
        if (seen.has(cur)) { loops = true; break; }
        seen.add(cur);
        cur = cur.parentId ? m.getEntry(cur.parentId) : undefined;
      }
      out.branches[e.id] = loops ? null : m.getBranch(e.id).map((b) => b.id);
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
