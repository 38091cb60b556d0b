/*
 * pikit Browser Client: the dev-mode Pi taskbar inside one Shadow-DOM host.
 * Plain JavaScript, no framework, no build step. Served at <mount>/assets/client.js
 * with its styles at <mount>/assets/client.css; the page carries the bootstrap
 * element documented in taskbar/client (embed.go, client.go).
 * Rules: seed 000 "Normalized browser context", "Browser reconciliation and host
 * navigation", "Corner composer and taskbar accessibility", "Prompt envelope";
 * reference taskbar.md §3-5, §7, §10, §11.
 */
(() => {
  "use strict";

  const VERSION = "1";
  const CONTRACT_VERSION = 1;
  const HOST_ID = "pi-browser-taskbar-host";
  const BOOTSTRAP_ID = "pi-browser-taskbar-bootstrap";
  const DEFAULT_MOUNT = "/dev/pi-browser-taskbar";
  const CSRF_HEADER = "X-CSRF-Token";
  const ACTIVE_POLL_MS = 500;
  const STABLE_POLL_MS = 30000;
  const BACKOFF_MIN_MS = 1000;
  const BACKOFF_MAX_MS = 30000;
  const READ_TIMEOUT_MS = 15000;
  const MUTATION_TIMEOUT_MS = 120000;
  // Consecutive failed reads after which the status itself says the
  // connection is lost (the retry note shows from the second).
  const CONNECTION_FAILURES = 3;
  // After Stop turns back into Run the button stays disabled this long, so a
  // click meant as Stop that lands just after the task ended starts nothing.
  const RUN_CALM_MS = 800;
  const IDEMPOTENCY_HEADER = "Idempotency-Key";
  // Per-tab session storage (one key per mount base): open panel, draft and
  // marks of this page survive a full reload by the app's hot reload.
  const STORAGE_PREFIX = "pi-browser-taskbar:";
  const RESTORE_MARKS_MS = 10000;
  const MAX_MARKS = 8;
  const PROMPT_BYTES = 4000;
  const LIMITS = Object.freeze({
    context: 98304,
    page: 49152,
    focus: 49152,
    pageNodes: 750,
    pageDepth: 12,
    focusNodes: 100,
    focusDepth: 6,
    selector: 1000,
    ancestors: 8,
    role: 64,
    name: 512,
    text: 1000,
    id: 256,
    classToken: 128,
    classes: 32,
    attribute: 256,
    origin: 512,
    path: 2048,
    queryName: 128,
    queryNames: 32,
    symbol: 256,
    sourcePath: 500,
  });
  const REASON_ORDER = ["bytes", "nodes", "depth", "string"];
  const EXCLUDED_TAGS = new Set([
    "base", "head", "iframe", "link", "meta", "noscript", "option", "script", "style", "template", "title",
  ]);
  const NO_TEXT_TAGS = new Set(["input", "option", "select", "textarea"]);
  const FORM_CONTROLS = new Set(["button", "fieldset", "input", "optgroup", "option", "select", "textarea"]);
  const TAG_RE = /^[a-z][a-z0-9-]*$/;
  const ORIGIN_RE = /^https?:\/\/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?$/;
  const CONTROLS_RE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/gu;
  const WHITE_SPACE_RE = /\p{White_Space}+/gu;
  const EDGE_SPACE_RE = /^\p{White_Space}+|\p{White_Space}+$/gu;
  const BEGIN_CONTEXT = "--- BEGIN UNTRUSTED BROWSER CONTEXT ---";
  const END_CONTEXT = "--- END UNTRUSTED BROWSER CONTEXT ---";

  // Fixed texts for the contract's stable codes: the client shows its own words for a
  // code and never renders server-supplied message text (seed "Shared HTTP API").
  const CODE_TEXT = Object.freeze({
    forbidden: "Pi Browser Taskbar is not allowed from this host or client address.",
    invalid_csrf:
      "The request was refused because its security token was not accepted; nothing was changed. Please try again, or reload the page if it keeps happening.",
    invalid_task: "Task request is invalid.",
    malformed_json: "Task request is invalid.",
    oversized_payload: "Task request is too large.",
    busy: "Another Pi task is active.",
    task_not_found: "Task was not found.",
    task_not_cancellable: "Task can no longer be stopped.",
    reset_while_busy: "A fresh session cannot start while Pi is busy.",
    session_reset_rejected: "Pi kept the current session.",
    unavailable: "Pi is not ready.",
  });
  // A 422 invalid_csrf after a body swap replaced the bootstrap mid-request: the
  // mutation is not resent (exactly once); the user retries with the new token.
  const CSRF_ROTATED_TEXT =
    "The request was refused because the page's security token had changed; nothing was changed. The new token is now in use: please try again.";
  // Tab coordination notice (same browser, same mount base): a bare "read again"
  // hint that carries no state, so a tab only ever answers it with GET /state.
  const NOTICE = "pi-browser-taskbar:state-changed";
  const MARK_NAME_CHARS = 40;
  const UNCERTAIN_TEXT = "The request result was uncertain; current project state was reconciled.";
  const CONNECTION_LOST_TEXT = "Connection lost. Retrying without clearing the last known state.";
  const DISCONNECTED_TEXT = "Connection lost";
  const FRAME_TEXT =
    "Elements inside a frame cannot be marked. Mark the frame element's surroundings on this page, or open the framed page on its own to mark inside it.";
  const CANCEL_WARNING = "Stopping cannot roll back changes Pi already made.";
  const REMOTE_WARNING = "Remote HTTP access is unencrypted. Use only on a trusted network.";
  const TRUNCATED_TEXT = "Showing the newest 32 KiB; older output was removed.";
  const MARK_HELP =
    "Marking: click an element on the page, or move focus to one and press Enter or Space. Press Escape to cancel.";

  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const utf8Length = (value) => encoder.encode(value).length;
  const jsonLength = (value) => utf8Length(JSON.stringify(value));

  // ---------------------------------------------------------------------------
  // Normalization (reference §3 "Adapter normalization"): the server applies the
  // same steps, so every string we send is already a fixed point of them.

  function cleanText(value) {
    let text = String(value ?? "");
    if (typeof text.toWellFormed === "function") text = text.toWellFormed();
    text = text.replace(/\r\n?/g, "\n").replace(CONTROLS_RE, "");
    return text.normalize("NFC").replace(CONTROLS_RE, "");
  }

  function structural(value) {
    return cleanText(value).replace(WHITE_SPACE_RE, " ").replace(/^ | $/g, "");
  }

  function normalizePrompt(value) {
    return cleanText(value).replace(EDGE_SPACE_RE, "");
  }

  // bounded cuts a structural string at maxBytes on a code-point boundary and
  // reports the "string" truncation reason when it had to cut.
  function bounded(value, maxBytes, record) {
    const text = structural(value);
    if (text.length * 3 <= maxBytes) return text;
    const bytes = encoder.encode(text);
    if (bytes.length <= maxBytes) return text;
    let cut = maxBytes;
    while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut -= 1;
    if (record) record("string");
    return decoder.decode(bytes.subarray(0, cut)).replace(/ $/, "");
  }

  // ---------------------------------------------------------------------------
  // Canonical JSON and the prompt envelope (seed "Prompt envelope", reference §5):
  // sorted keys, compact, non-ASCII raw, then <, >, & as \u003c, \u003e, \u0026.

  function canonicalJSON(value) {
    if (value === null || typeof value !== "object") return JSON.stringify(value);
    if (Array.isArray(value)) return "[" + value.map(canonicalJSON).join(",") + "]";
    const keys = Object.keys(value).filter((key) => value[key] !== undefined).sort(compareBytes);
    return "{" + keys.map((key) => JSON.stringify(key) + ":" + canonicalJSON(value[key])).join(",") + "}";
  }

  function compareBytes(left, right) {
    const a = encoder.encode(left);
    const b = encoder.encode(right);
    const length = Math.min(a.length, b.length);
    for (let index = 0; index < length; index += 1) {
      if (a[index] !== b[index]) return a[index] - b[index];
    }
    return a.length - b.length;
  }

  function envelope(prompt, context) {
    const json = canonicalJSON(context)
      .replace(/</g, "\\u003c")
      .replace(/>/g, "\\u003e")
      .replace(/&/g, "\\u0026");
    return `${normalizePrompt(prompt)}\n\n${BEGIN_CONTEXT}\n${json}\n${END_CONTEXT}`;
  }

  // ---------------------------------------------------------------------------
  // Source hints (reference §11). Three annotation families are read from the
  // current DOM at capture time: Rails ERB and pikit gotmpl comment pairs (same
  // pairing rules) and Phoenix HEEx debug annotations.

  const hint = (status, references = []) => ({ status, references });
  const UNAVAILABLE = () => hint("unavailable");

  function relativeProjectPath(path, dependencyPrefixes) {
    if (typeof path !== "string" || path === "") return null;
    if (path.startsWith("/") || path.includes("\\") || /^[A-Za-z]:/.test(path)) return null;
    const segments = path.split("/");
    if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return null;
    for (const prefix of dependencyPrefixes) {
      if (prefix.every((part, index) => segments[index] === part)) return null;
    }
    return utf8Length(path) <= LIMITS.sourcePath ? path : null;
  }

  function erbAnnotation(text) {
    const match = /^\s*(BEGIN|END)\s+([^\r\n]*?\S)\s*$/u.exec(text);
    if (match && match[2].endsWith(".erb")) return { kind: match[1] === "BEGIN" ? "begin" : "end", path: match[2] };
    const marker = /^\s*(BEGIN|END)\b/u.exec(text);
    if (marker && /\.erb\b|app[\\/]views/u.test(text)) {
      return { kind: "malformed", direction: marker[1] === "BEGIN" ? "begin" : "end" };
    }
    return null;
  }

  function gotmplAnnotation(text) {
    const match = /^\s*(BEGIN|END)\s+gotmpl:([^\r\n]*?\S)\s*$/u.exec(text);
    if (match) return { kind: match[1] === "BEGIN" ? "begin" : "end", path: match[2] };
    const marker = /^\s*(BEGIN|END)\b/u.exec(text);
    if (marker && text.includes("gotmpl:")) {
      return { kind: "malformed", direction: marker[1] === "BEGIN" ? "begin" : "end" };
    }
    return null;
  }

  // commentRangeHint implements the comment-pair rules: at each level pair the
  // parent's BEGIN/END comments with a stack, take the innermost range strictly
  // around the branch, classify invalid boundaries near it as ambiguous, and
  // otherwise move one level up. The first enclosing range decides.
  function commentRangeHint(element, parse, dependencyPrefixes, cache) {
    let branch = element;
    while (branch && branch.parentNode) {
      const level = rangesAt(branch.parentNode, parse, cache);
      const index = level.index.get(branch);
      if (index !== undefined) {
        let innermost = null;
        for (const range of level.ranges) {
          if (range.start < index && index < range.end) {
            if (!innermost || range.start > innermost.start || (range.start === innermost.start && range.end < innermost.end)) {
              innermost = range;
            }
          }
        }
        const start = innermost ? innermost.start : -1;
        const end = innermost ? innermost.end : level.count;
        const suspicious =
          level.invalidBegins.some((position) => start < position && position < index) ||
          level.invalidEnds.some((position) => index < position && position < end);
        if (suspicious) return hint("ambiguous");
        if (innermost) {
          const path = relativeProjectPath(innermost.path, dependencyPrefixes);
          return path ? hint("available", [{ role: "template", path, precision: "template" }]) : hint("external");
        }
      }
      branch = branch.parentNode;
    }
    return UNAVAILABLE();
  }

  function rangesAt(parent, parse, cache) {
    let perParser = cache && cache.get(parse);
    if (cache && !perParser) {
      perParser = new Map();
      cache.set(parse, perParser);
    }
    if (perParser && perParser.has(parent)) return perParser.get(parent);
    const children = parent.childNodes;
    const index = new Map();
    const stack = [];
    const level = { ranges: [], invalidBegins: [], invalidEnds: [], index, count: children.length };
    for (let position = 0; position < children.length; position += 1) {
      const node = children[position];
      index.set(node, position);
      if (node.nodeType !== 8) continue;
      const annotation = parse(node.data);
      if (!annotation) continue;
      if (annotation.kind === "malformed") {
        (annotation.direction === "begin" ? level.invalidBegins : level.invalidEnds).push(position);
      } else if (annotation.kind === "begin") {
        stack.push({ position, path: annotation.path });
      } else {
        const top = stack[stack.length - 1];
        if (top && top.path === annotation.path) {
          stack.pop();
          level.ranges.push({ start: top.position, end: position, path: top.path });
        } else {
          level.invalidEnds.push(position);
          for (const open of stack) level.invalidBegins.push(open.position);
          stack.length = 0;
        }
      }
    }
    for (const open of stack) level.invalidBegins.push(open.position);
    if (perParser) perParser.set(parent, level);
    return level;
  }

  const HEEX_DEFINITION = /^\s*<([^\s<>/]+)>\s+(\S+):([1-9][0-9]*)\s+\(([^\s()]+)\)\s*$/u;
  const HEEX_CLOSING = /^\s*<\/([^\s<>/]+)>\s*$/u;
  const HEEX_CALLER = /^\s*@caller\s+(\S+):([1-9][0-9]*)\s+\(([^\s()]+)\)\s*$/u;

  function heexAnnotation(text) {
    let match = HEEX_DEFINITION.exec(text);
    if (match) return { kind: "definition", name: match[1], path: match[2], line: Number(match[3]), app: match[4] };
    match = HEEX_CLOSING.exec(text);
    if (match) return { kind: "closing", name: match[1] };
    match = HEEX_CALLER.exec(text);
    if (match) return { kind: "caller", path: match[1], line: Number(match[2]), app: match[3] };
    if (/^\s*(?:<\/?[A-Za-z:]|@caller\b)/u.test(text)) return { kind: "malformed" };
    return null;
  }

  function heexHint(element, projectApp) {
    const location = element.getAttribute ? element.getAttribute("data-phx-loc") : null;
    if (location !== null && location !== undefined && !/^[1-9][0-9]*$/.test(location)) return hint("ambiguous");
    if (typeof projectApp !== "string" || !/^[a-z][a-z0-9_]*$/.test(projectApp)) return UNAVAILABLE();

    const annotations = [];
    for (let node = element; node; node = node.parentNode) {
      for (let sibling = node.previousSibling; sibling; sibling = sibling.previousSibling) {
        if (sibling.nodeType !== 8) continue;
        const annotation = heexAnnotation(sibling.data);
        if (annotation) annotations.push(annotation);
      }
    }

    const closings = [];
    for (let position = 0; position < annotations.length; position += 1) {
      const annotation = annotations[position];
      if (annotation.kind === "malformed" || annotation.kind === "caller") return hint("ambiguous");
      if (annotation.kind === "closing") {
        closings.push(annotation.name);
        continue;
      }
      if (closings.length > 0) {
        if (closings.pop() !== annotation.name) return hint("ambiguous");
        if (annotations[position + 1]?.kind === "caller") position += 1;
        continue;
      }
      // The nearest open definition decides.
      const next = annotations[position + 1];
      const caller = next?.kind === "caller" ? next : null;
      if (caller && annotations[position + 2]?.kind === "caller") return hint("ambiguous");
      if (!caller && next?.kind === "definition") return hint("ambiguous");
      const heexPath = (path, app) => (app === projectApp ? relativeProjectPath(path, [["deps"], ["_build"]]) : null);
      const definitionPath = heexPath(annotation.path, annotation.app);
      if (!definitionPath) return hint("external");
      if (caller) {
        const callerPath = heexPath(caller.path, caller.app);
        if (!callerPath) return hint("external");
        const definition = { role: "definition", path: definitionPath, line: annotation.line, precision: "line" };
        if (utf8Length(annotation.name) <= LIMITS.symbol) definition.symbol = annotation.name;
        return hint("available", [definition, { role: "caller", path: callerPath, line: caller.line, precision: "line" }]);
      }
      if (location === null || location === undefined) return UNAVAILABLE();
      if (!annotation.name.endsWith(".render") && !definitionPath.endsWith(".heex")) return hint("ambiguous");
      return hint("available", [{ role: "template", path: definitionPath, line: Number(location), precision: "line" }]);
    }
    return closings.length > 0 ? hint("ambiguous") : UNAVAILABLE();
  }

  // sourceHint asks each family in turn; the first that finds any evidence
  // (anything but unavailable) decides.
  function sourceHint(element, projectApp, cache) {
    const gotmpl = commentRangeHint(element, gotmplAnnotation, [["vendor"]], cache);
    if (gotmpl.status !== "unavailable") return gotmpl;
    const erb = commentRangeHint(element, erbAnnotation, [[".bundle"], ["vendor", "bundle"]], cache);
    if (erb.status !== "unavailable") return erb;
    return heexHint(element, projectApp);
  }

  // ---------------------------------------------------------------------------
  // Context capture (seed "Normalized browser context", reference §3, §10).

  function httpLocation(url, base, record) {
    let parsed;
    try {
      parsed = new URL(url, base);
    } catch (_error) {
      return null;
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
    const origin = parsed.origin;
    if (!ORIGIN_RE.test(origin) || utf8Length(origin) > LIMITS.origin) return null;
    let path = parsed.pathname;
    try {
      path = decodeURI(path);
    } catch (_error) {
      path = parsed.pathname;
    }
    path = bounded(path, LIMITS.path, record);
    if (!path.startsWith("/")) path = "/" + path;
    if (utf8Length(path) > LIMITS.path || /[?#]/.test(path)) path = "/";
    const names = [];
    for (const key of parsed.searchParams.keys()) {
      const name = bounded(key, LIMITS.queryName, record);
      if (name && !names.includes(name) && names.length < LIMITS.queryNames) names.push(name);
    }
    return { origin, path, query_names: names };
  }

  function excluded(element, host) {
    if (element === host) return true;
    const tag = String(element.localName || "").toLowerCase();
    if (EXCLUDED_TAGS.has(tag)) return true;
    if (tag === "input" && String(element.getAttribute("type") || "").toLowerCase() === "hidden") return true;
    if (element.hasAttribute("hidden") || element.hasAttribute("inert")) return true;
    if (element.isContentEditable) return true;
    if (element.getAttribute("aria-hidden") === "true") return true;
    const view = element.ownerDocument.defaultView;
    const style = view && view.getComputedStyle ? view.getComputedStyle(element) : null;
    if (!style) return false;
    return (
      style.display === "none" ||
      style.visibility === "hidden" ||
      style.contentVisibility === "hidden" ||
      style.opacity === "0"
    );
  }

  function capturable(element, host) {
    if (!element || element.nodeType !== 1 || !element.isConnected) return false;
    const document = element.ownerDocument;
    if (element === document.body || element === document.documentElement) return false;
    for (let node = element; node && node !== document.body; node = node.parentElement) {
      if (!node.parentElement) return false;
      if (excluded(node, host) || !TAG_RE.test(String(node.localName).toLowerCase())) return false;
    }
    return true;
  }

  function accessibleName(element) {
    const document = element.ownerDocument;
    const labelledBy = element.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = labelledBy
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => document.getElementById(id)?.textContent || "")
        .join(" ");
      if (structural(text)) return text;
    }
    const label = element.getAttribute("aria-label");
    if (label && structural(label)) return label;
    if (element.labels && element.labels.length > 0) {
      const text = Array.from(element.labels, (item) => item.textContent || "").join(" ");
      if (structural(text)) return text;
    }
    const tag = element.localName;
    const type = String(element.getAttribute("type") || "").toLowerCase();
    if (tag === "img" || tag === "area" || (tag === "input" && type === "image")) {
      const alt = element.getAttribute("alt");
      if (alt && structural(alt)) return alt;
    }
    const title = element.getAttribute("title");
    if (title && structural(title)) return title;
    if (tag === "a" || tag === "button" || tag === "summary" || element.hasAttribute("role")) {
      const text = typeof element.innerText === "string" ? element.innerText : element.textContent;
      if (text && structural(text)) return text;
    }
    return "";
  }

  function ariaValue(element, name, allowed) {
    const value = element.getAttribute("aria-" + name);
    if (value === null) return undefined;
    const lowered = value.trim().toLowerCase();
    if (lowered === "true") return true;
    if (lowered === "false") return false;
    return allowed.includes(lowered) ? lowered : undefined;
  }

  function controlState(element) {
    const state = {};
    for (const name of ["disabled", "selected", "expanded", "required"]) {
      const value = ariaValue(element, name, []);
      if (value !== undefined) state[name] = value;
    }
    for (const name of ["checked", "pressed"]) {
      const value = ariaValue(element, name, ["mixed"]);
      if (value !== undefined) state[name] = value;
    }
    const invalid = ariaValue(element, "invalid", ["grammar", "spelling"]);
    if (invalid !== undefined) state.invalid = invalid;

    const tag = element.localName;
    if (!("disabled" in state) && FORM_CONTROLS.has(tag) && element.disabled === true) state.disabled = true;
    const type = String(element.getAttribute("type") || "").toLowerCase();
    if (!("checked" in state) && tag === "input" && (type === "checkbox" || type === "radio")) {
      state.checked = element.indeterminate ? "mixed" : element.checked === true;
    }
    if (!("required" in state) && element.required === true) state.required = true;
    if (!("invalid" in state) && element.willValidate && element.validity && !element.validity.valid) state.invalid = true;
    return state;
  }

  function buildNode(element, record, base) {
    const node = { tag: String(element.localName).toLowerCase() };
    const role = bounded(element.getAttribute("role") || "", LIMITS.role, record);
    if (role) node.role = role;
    const name = bounded(accessibleName(element), LIMITS.name, record);
    if (name) node.name = name;
    if (!NO_TEXT_TAGS.has(node.tag)) {
      const parts = [];
      for (const child of element.childNodes) if (child.nodeType === 3) parts.push(child.data);
      const text = bounded(parts.join(" "), LIMITS.text, record);
      if (text) node.text = text;
    }
    const id = bounded(element.getAttribute("id") || "", LIMITS.id, record);
    if (id) node.id = id;
    const classes = [];
    for (const token of element.classList || []) {
      if (classes.length >= LIMITS.classes) break;
      const value = bounded(token, LIMITS.classToken, record);
      if (value && !classes.includes(value)) classes.push(value);
    }
    if (classes.length > 0) node.classes = classes;
    const attributes = {};
    for (const key of ["name", "type", "placeholder", "data-testid"]) {
      const value = bounded(element.getAttribute(key) || "", LIMITS.attribute, record);
      if (value) attributes[key] = value;
    }
    if (Object.keys(attributes).length > 0) node.attributes = attributes;
    const state = controlState(element);
    if (Object.keys(state).length > 0) node.state = state;
    if (element.hasAttribute("href")) {
      const href = httpLocation(element.getAttribute("href"), base, record);
      if (href) node.href = href;
    }
    if (element.hasAttribute("src")) {
      const src = httpLocation(element.getAttribute("src"), base, record);
      if (src) node.src = src;
    }
    node.children = [];
    return node;
  }

  // captureTree walks breadth-first from root, keeping nodes in BFS order so the
  // byte trimming can drop the last one (always a leaf and its parent's last child).
  function captureTree(root, options) {
    const { host, maxNodes, maxDepth, record, base, sourceOf } = options;
    const rootNode = buildNode(root, record, base);
    const rootSource = sourceOf ? sourceOf(root, null) : null;
    if (rootSource) rootNode.source = rootSource.hint;
    const order = [rootNode];
    const parents = new Map();
    const queue = [{ element: root, node: rootNode, depth: 0, source: rootSource ? rootSource.key : "" }];
    let stopped = false;
    for (let head = 0; head < queue.length && !stopped; head += 1) {
      const item = queue[head];
      for (const child of item.element.children) {
        if (!TAG_RE.test(String(child.localName).toLowerCase()) || excluded(child, host)) continue;
        if (item.depth + 1 > maxDepth) {
          record("depth");
          break;
        }
        if (order.length >= maxNodes) {
          record("nodes");
          stopped = true;
          break;
        }
        const node = buildNode(child, record, base);
        let sourceKey = item.source;
        if (sourceOf) {
          const found = sourceOf(child, item.source);
          if (found) {
            node.source = found.hint;
            sourceKey = found.key;
          }
        }
        item.node.children.push(node);
        parents.set(node, item.node);
        order.push(node);
        queue.push({ element: child, node, depth: item.depth + 1, source: sourceKey });
      }
    }
    return { root: rootNode, order, parents };
  }

  const ROOT_FIELDS = ["text", "name", "classes", "attributes", "state", "href", "src", "id", "role", "source"];

  // trimTree removes the last BFS node while measure() exceeds limit, then
  // deletes optional root fields. measure() is the exact JSON byte size of the
  // whole bounded value; removals update it incrementally and it is re-checked.
  function trimTree(tree, measure, limit, record, onlyRoot) {
    let size = measure();
    while (size > limit) {
      if (tree.order.length > 1) {
        const node = tree.order.pop();
        const parent = tree.parents.get(node);
        parent.children.pop();
        size -= jsonLength(node) + (parent.children.length > 0 ? 1 : 0);
        record("bytes");
        if (size <= limit) size = measure();
        continue;
      }
      if (onlyRoot && onlyRoot()) {
        size = measure();
        record("bytes");
        continue;
      }
      const field = ROOT_FIELDS.find((key) => key in tree.root);
      if (!field) break;
      delete tree.root[field];
      record("bytes");
      size = measure();
    }
    return size <= limit;
  }

  function summary(element, record) {
    const item = { tag: String(element.localName).toLowerCase() };
    const role = bounded(element.getAttribute("role") || "", LIMITS.role, record);
    if (role) item.role = role;
    const name = bounded(accessibleName(element), LIMITS.name, record);
    if (name) item.name = name;
    const id = bounded(element.getAttribute("id") || "", LIMITS.id, record);
    if (id) item.id = id;
    return item;
  }

  function reasonRecorder() {
    const reasons = new Set();
    const record = (reason) => reasons.add(reason);
    record.list = () => REASON_ORDER.filter((reason) => reasons.has(reason));
    return record;
  }

  // captureContext builds a normalized browser-context.v1 value for the current
  // document and the marked elements (0-8, in mark order).
  function captureContext(document, options) {
    const host = options.host || null;
    const marks = options.marks || [];
    const projectApp = options.projectApp || null;
    const view = document.defaultView;
    const base = document.baseURI;
    const cache = new Map();
    const hintFor = (element) => sourceHint(element, projectApp, cache);

    const pageRecord = reasonRecorder();
    const location = httpLocation(view ? view.location.href : "", base, pageRecord) || {
      origin: "http://localhost",
      path: "/",
      query_names: [],
    };

    // Focus points: selector and complete hint first, then an even share of
    // the focus allocation in mark order (seed "Normalized browser context").
    const focusPoints = [];
    const focusRecords = [];
    const count = marks.length;
    const share = count > 0 ? Math.floor((LIMITS.focus - 2 - (count - 1)) / count) : 0;
    const remainder = count > 0 ? LIMITS.focus - 2 - (count - 1) - share * count : 0;
    marks.forEach((mark, index) => {
      const record = reasonRecorder();
      const ancestors = [];
      for (let node = mark.element.parentElement; node && node !== document.body && node !== document.documentElement; node = node.parentElement) {
        ancestors.unshift(node);
      }
      const summaries = ancestors.slice(-LIMITS.ancestors).map((element) => summary(element, record));
      const tree = captureTree(mark.element, {
        host,
        maxNodes: LIMITS.focusNodes,
        maxDepth: LIMITS.focusDepth,
        record,
        base,
        sourceOf: null,
      });
      const point = { selector: mark.selector, source: hintFor(mark.element), ancestors: summaries, subtree: tree.root };
      const allocation = share + (index < remainder ? 1 : 0);
      trimTree(tree, () => jsonLength(point), allocation, record, () => {
        if (point.ancestors.length === 0) return false;
        point.ancestors.shift();
        return true;
      });
      focusPoints.push(point);
      focusRecords.push(record);
    });

    const sourceOf = (element, inheritedKey) => {
      const found = hintFor(element);
      if (found.status !== "available") return null;
      const key = JSON.stringify(found);
      return key === inheritedKey ? null : { hint: found, key };
    };
    const page = captureTree(document.body, {
      host,
      maxNodes: LIMITS.pageNodes,
      maxDepth: LIMITS.pageDepth,
      record: pageRecord,
      base,
      sourceOf,
    });
    const context = {
      contract_version: CONTRACT_VERSION,
      location,
      route: null,
      snapshot: page.root,
      focus_points: focusPoints,
      truncation: [],
    };
    trimTree(page, () => jsonLength(page.root), LIMITS.page, pageRecord);
    const truncation = () => {
      const entries = [];
      const pageReasons = pageRecord.list();
      if (pageReasons.length > 0) entries.push({ section: "page", reasons: pageReasons });
      focusRecords.forEach((record, index) => {
        const reasons = record.list();
        if (reasons.length > 0) entries.push({ section: `focus:${index + 1}`, reasons });
      });
      return entries;
    };
    // The page gets what the context allocation leaves; the truncation list is
    // rebuilt inside measure so its own bytes are counted.
    trimTree(page, () => {
      context.truncation = truncation();
      return jsonLength(context);
    }, LIMITS.context, pageRecord);
    context.truncation = truncation();
    return context;
  }

  // ---------------------------------------------------------------------------
  // Stable selectors (reference §10 "Marks and selectors").

  function cssString(value) {
    return '"' + String(value).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/[\n\r\f]/g, " ") + '"';
  }

  function matchesOnly(document, selector, element) {
    try {
      const found = document.querySelectorAll(selector);
      return found.length === 1 && found[0] === element;
    } catch (_error) {
      return false;
    }
  }

  function usableSelector(document, selector, element) {
    return (
      structural(selector) === selector &&
      utf8Length(selector) <= LIMITS.selector &&
      matchesOnly(document, selector, element)
    );
  }

  function anchorSelector(document, element) {
    const testId = element.getAttribute("data-testid");
    if (testId) {
      const selector = `[data-testid=${cssString(testId)}]`;
      if (usableSelector(document, selector, element)) return selector;
    }
    const id = element.getAttribute("id");
    if (id) {
      const selector = `[id=${cssString(id)}]`;
      if (usableSelector(document, selector, element)) return selector;
    }
    return null;
  }

  function segmentOf(element) {
    const view = element.ownerDocument.defaultView;
    const escape = view && view.CSS && view.CSS.escape ? view.CSS.escape : (value) => value;
    const tag = escape(element.localName);
    const parent = element.parentElement;
    if (!parent) return tag;
    let same = 0;
    let position = 0;
    for (const sibling of parent.children) {
      if (sibling.localName === element.localName) {
        same += 1;
        if (sibling === element) position = same;
      }
    }
    return same > 1 ? `${tag}:nth-of-type(${position})` : tag;
  }

  function selectorFor(document, element) {
    const anchored = anchorSelector(document, element);
    if (anchored) return anchored;
    const segments = [];
    for (let node = element; node && node.parentElement; node = node.parentElement) {
      segments.unshift(segmentOf(node));
      const ancestor = node.parentElement;
      if (ancestor === document.body || ancestor === document.documentElement) continue;
      const anchor = anchorSelector(document, ancestor);
      if (anchor) {
        const selector = `${anchor} > ${segments.join(" > ")}`;
        if (usableSelector(document, selector, element)) return selector;
      }
    }
    for (let length = 1; length <= segments.length; length += 1) {
      const selector = segments.slice(segments.length - length).join(" > ");
      if (usableSelector(document, selector, element)) return selector;
    }
    return null;
  }

  // ---------------------------------------------------------------------------
  // Bootstrap: <script type="application/json" id="pi-browser-taskbar-bootstrap">
  // {"mount_base":"/dev/pi-browser-taskbar","csrf_token":"…","remote_access":false,
  //  "project_app":"demo"}</script>; project_app is optional (Phoenix HEEx hints).

  function scriptMountBase() {
    const script = document.currentScript;
    if (!script || !script.src) return null;
    try {
      const path = new URL(script.src, document.baseURI).pathname;
      const suffix = "/assets/client.js";
      return path.endsWith(suffix) ? path.slice(0, -suffix.length) : null;
    } catch (_error) {
      return null;
    }
  }

  // hideBootstrap keeps the bootstrap JSON off the screen even when a host
  // stylesheet such as `* { all: unset }` undoes the user agent's
  // `script { display: none }`: an inline !important declaration wins over
  // any normal author rule.
  function hideBootstrap(element) {
    if (element && element.style && element.style.getPropertyPriority("display") !== "important") {
      element.style.setProperty("display", "none", "important");
    }
  }

  function readBootstrap(document, previous) {
    const element = document.getElementById(BOOTSTRAP_ID);
    if (!element) return previous;
    hideBootstrap(element);
    let data;
    try {
      data = JSON.parse(element.textContent || "{}");
    } catch (_error) {
      return previous;
    }
    if (!data || typeof data !== "object") return previous;
    let mountBase = typeof data.mount_base === "string" ? data.mount_base : previous.mountBase;
    if (!/^\/[^?#\s]*$/.test(mountBase)) mountBase = previous.mountBase;
    mountBase = mountBase.replace(/\/+$/, "") || "";
    return {
      mountBase,
      csrfToken: typeof data.csrf_token === "string" ? data.csrf_token : "",
      remoteAccess: data.remote_access === true,
      projectApp: typeof data.project_app === "string" ? data.project_app : null,
    };
  }

  // ---------------------------------------------------------------------------
  // Presentation of the canonical snapshot.

  // isWorking is true while a task holds the session: editing, marking and
  // copying are locked, Stop stays available.
  function isWorking(snapshot) {
    const session = snapshot && snapshot.session ? snapshot.session.status : "starting";
    const task = snapshot && snapshot.task ? snapshot.task.status : null;
    return session === "busy" || task === "running" || task === "cancelling";
  }

  function isActive(snapshot) {
    const session = snapshot && snapshot.session ? snapshot.session.status : "starting";
    const task = snapshot && snapshot.task ? snapshot.task.status : null;
    return (
      session === "starting" ||
      session === "resetting" ||
      session === "busy" ||
      task === "running" ||
      task === "cancelling"
    );
  }

  // visibleState maps the snapshot to one of the six stable states. A failed
  // task keeps the "Finished" word but says so (upstream gap §16.5): status
  // "Finished (failed)", data-state "failed" and the task error shown.
  function visibleState(snapshot) {
    const session = snapshot && snapshot.session ? snapshot.session : { status: "starting" };
    const task = snapshot ? snapshot.task : null;
    const taskStatus = task ? task.status : null;
    if (taskStatus === "running" || taskStatus === "cancelling") return { word: "Working", text: "Working", state: taskStatus };
    if (session.status === "starting" || session.status === "resetting") {
      return { word: "Connecting", text: "Connecting", state: session.status };
    }
    if (session.status === "unavailable") return { word: "Unavailable", text: "Unavailable", state: "unavailable" };
    if (taskStatus === "completed") return { word: "Finished", text: "Finished", state: "completed" };
    if (taskStatus === "failed") return { word: "Finished", text: "Finished (failed)", state: "failed" };
    if (taskStatus === "cancelled") return { word: "Stopped", text: "Stopped", state: "cancelled" };
    if (session.status === "busy") return { word: "Working", text: "Working", state: "busy" };
    return { word: "Ready", text: "Ready", state: session.status || "ready" };
  }

  function connectingActivity(session) {
    if (!session || session.status === "starting") return "Connecting to the local Pi session";
    if (session.status === "resetting") return "Starting a fresh session";
    if (session.status === "unavailable") return "Check that Pi is installed and authenticated";
    return "";
  }

  function markup(mountBase) {
    const css = `${mountBase}/assets/client.css`.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
    return `<link rel="stylesheet" href="${css}">
<div class="pi-root" data-root>
  <div class="pi-outlines" data-outlines aria-hidden="true"></div>
  <section class="pi-panel" id="pi-panel" data-panel aria-labelledby="pi-title" hidden>
    <div class="pi-head" data-head>
    <div class="pi-identity-part" data-part="identity">
      <header class="pi-identity">
        <h2 id="pi-title" class="pi-title">Pi</h2>
        <div class="pi-identity-actions">
          <button type="button" class="pi-button" data-reset disabled>New session</button>
          <button type="button" class="pi-close" data-close aria-label="Close Pi taskbar">Close</button>
        </div>
      </header>
      <p class="pi-model" data-model>Local Pi session</p>
      <div class="pi-confirm" data-reset-confirm role="group" aria-labelledby="pi-reset-question" hidden>
        <p id="pi-reset-question" class="pi-confirm-text">Start a fresh Pi session? Pi forgets this conversation and the last task's feedback is cleared.</p>
        <div class="pi-actions">
          <button type="button" class="pi-button pi-primary" data-reset-yes>Start new session</button>
          <button type="button" class="pi-button" data-reset-no>Keep session</button>
        </div>
      </div>
    </div>
    <div class="pi-focus" data-part="focus" role="group" aria-labelledby="pi-focus-label">
      <p class="pi-focus-line"><span id="pi-focus-label">Task focus:</span> <span data-scope>Whole page</span></p>
      <div class="pi-focus-actions">
        <button type="button" class="pi-button" data-mark aria-pressed="false" aria-describedby="pi-mark-help">Mark element</button>
        <button type="button" class="pi-button" data-clear hidden>Clear all marks</button>
      </div>
      <p class="pi-help" id="pi-mark-help" data-mark-help hidden>${MARK_HELP}</p>
    </div>
    </div>
    <div class="pi-body" data-body>
    <p class="pi-warning" data-remote-warning hidden>${REMOTE_WARNING}</p>
    <ol class="pi-marks" data-marks aria-label="Marked elements" hidden></ol>
    <div class="pi-instruction" data-part="instruction">
      <label for="pi-prompt" class="pi-label">Task instruction</label>
      <textarea id="pi-prompt" class="pi-prompt" data-prompt rows="3" aria-describedby="pi-prompt-help"></textarea>
      <p class="pi-help" id="pi-prompt-help" data-prompt-help hidden></p>
    </div>
    <div class="pi-feedback" data-part="feedback">
      <p class="pi-activity" data-activity hidden></p>
      <pre class="pi-output" data-output tabindex="0" aria-label="Pi output" hidden></pre>
      <p class="pi-note" data-truncated hidden>${TRUNCATED_TEXT}</p>
      <p class="pi-error" data-error hidden></p>
      <p class="pi-warning" data-cancel-warning hidden>${CANCEL_WARNING}</p>
    </div>
    </div>
    <footer class="pi-footer" data-part="footer">
      <p class="pi-note pi-retry" data-retry hidden></p>
      <p class="pi-status" data-status data-state="starting"><span class="pi-dot" aria-hidden="true"></span><span data-status-text>Connecting</span></p>
      <div class="pi-actions pi-footer-actions">
        <button type="button" class="pi-button" data-copy disabled>Copy prompt</button>
        <button type="button" class="pi-button pi-primary" data-run aria-disabled="true">Run with Pi</button>
      </div>
    </footer>
  </section>
  <button type="button" class="pi-launcher" data-launcher aria-expanded="false" aria-controls="pi-panel">
    <span class="pi-launcher-mark" aria-hidden="true">π</span><span>Pi</span><span class="pi-sr-only"> taskbar: </span><span class="pi-dot" aria-hidden="true"></span><span data-launcher-status>Connecting</span><span class="pi-sr-only" data-launcher-scope>. Whole page.</span>
  </button>
  <div class="pi-sr-only" data-live role="status" aria-live="polite" aria-atomic="true"></div>
</div>`;
  }

  // ---------------------------------------------------------------------------
  // The mounted controller.

  function mount(document, initialBootstrap) {
    const existing = document.getElementById(HOST_ID);
    if (existing && existing.piBrowserTaskbar) {
      existing.piBrowserTaskbar.reconcile();
      return existing.piBrowserTaskbar;
    }
    if (existing) existing.remove();

    let bootstrap = readBootstrap(document, initialBootstrap);
    const view = document.defaultView;
    const host = document.createElement("div");
    host.id = HOST_ID;
    host.setAttribute("data-pi-browser-taskbar-host", "");
    host.setAttribute("data-turbo-permanent", "");
    host.setAttribute("phx-update", "ignore");
    host.style.cssText =
      "all: initial !important; position: fixed !important; left: 0 !important; bottom: 0 !important; " +
      "width: 0 !important; height: 0 !important; z-index: 2147483647 !important; display: block !important;";
    // Text spacing stays adjustable (WCAG 1.4.12): no important inline
    // spacing on the host (Firefox keeps each longhand of `all`); the
    // shadow root's own .pi-root sets them, so page values do not leak in.
    for (const property of ["letter-spacing", "word-spacing", "line-height"]) host.style.removeProperty(property);
    const shadow = host.attachShadow({ mode: "open" });
    shadow.innerHTML = markup(bootstrap.mountBase);
    const $ = (selector) => shadow.querySelector(selector);
    const ui = {
      panel: $("[data-panel]"),
      body: $("[data-body]"),
      feedback: $('[data-part="feedback"]'),
      model: $("[data-model]"),
      close: $("[data-close]"),
      reset: $("[data-reset]"),
      resetConfirm: $("[data-reset-confirm]"),
      resetYes: $("[data-reset-yes]"),
      resetNo: $("[data-reset-no]"),
      remote: $("[data-remote-warning]"),
      scope: $("[data-scope]"),
      mark: $("[data-mark]"),
      clear: $("[data-clear]"),
      markHelp: $("[data-mark-help]"),
      marks: $("[data-marks]"),
      prompt: $("[data-prompt]"),
      promptHelp: $("[data-prompt-help]"),
      activity: $("[data-activity]"),
      output: $("[data-output]"),
      truncated: $("[data-truncated]"),
      error: $("[data-error]"),
      cancelWarning: $("[data-cancel-warning]"),
      retry: $("[data-retry]"),
      status: $("[data-status]"),
      statusText: $("[data-status-text]"),
      copy: $("[data-copy]"),
      run: $("[data-run]"),
      launcher: $("[data-launcher]"),
      launcherStatus: $("[data-launcher-status]"),
      launcherScope: $("[data-launcher-scope]"),
      live: $("[data-live]"),
      outlines: $("[data-outlines]"),
      root: $("[data-root]"),
    };

    let snapshot = null;
    let generation = 0;
    let readInFlight = false;
    let readAgain = false;
    let readFailures = 0;
    let pollTimer = null;
    let mutationPending = false;
    let clientError = "";
    let marks = [];
    let marking = false;
    let hovered = null;
    let copiedTimer = null;
    let lastAnnounced = "";
    let announcedKey = "";
    let outlineFrame = 0;
    let validateQueued = false;
    let renderedTask = "";
    let renderedOutput = null;
    // Connection: true after CONNECTION_FAILURES consecutive failed reads.
    let disconnected = false;
    // Run/Stop meaning and when it last turned from Stop back into Run.
    let runMeaning = "run";
    let runCalmUntil = 0;
    let pressedMeaning = "";
    // Tool-call boundaries in the current task's output (UTF-16 offsets).
    let breaks = { task: "", at: [] };
    let seenOutput = null;
    // Marks restored after a reload whose elements are not on the page yet.
    let pendingMarks = [];
    let restoreUntil = 0;
    // Same-origin frame documents listened to while marking.
    let frameDocs = [];

    // --- announcements: one polite atomic region for status, activity and errors.
    function announce(text) {
      if (!text) return;
      if (text === lastAnnounced) {
        ui.live.textContent = "";
        view.setTimeout(() => {
          ui.live.textContent = text;
        }, 50);
      } else {
        ui.live.textContent = text;
      }
      lastAnnounced = text;
    }

    // --- HTTP.
    async function request(method, path, body, timeoutMs, key) {
      bootstrap = readBootstrap(document, bootstrap);
      const headers = { Accept: "application/json" };
      if (key) headers[IDEMPOTENCY_HEADER] = key;
      const init = { method, headers, credentials: "same-origin", cache: "no-store" };
      if (body !== undefined) {
        headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      const token = bootstrap.csrfToken;
      if (method !== "GET") headers[CSRF_HEADER] = token;
      const controller = typeof AbortController === "function" ? new AbortController() : null;
      if (controller) init.signal = controller.signal;
      const timer = controller ? view.setTimeout(() => controller.abort(), timeoutMs) : null;
      let response;
      try {
        response = await view.fetch(bootstrap.mountBase + path, init);
      } catch (_error) {
        const error = new Error(CONNECTION_LOST_TEXT);
        error.network = true;
        throw error;
      } finally {
        if (timer) view.clearTimeout(timer);
      }
      let payload = null;
      let text;
      try {
        text = await response.text();
      } catch (_error) {
        const error = new Error(CONNECTION_LOST_TEXT);
        error.network = true;
        throw error;
      }
      try {
        payload = JSON.parse(text);
      } catch (_error) {
        payload = null;
      }
      if (!response.ok) {
        const code = payload && payload.error && typeof payload.error.code === "string" ? payload.error.code : "";
        const error = new Error(CODE_TEXT[code] || `The taskbar request failed (HTTP ${response.status}).`);
        error.code = code;
        error.status = response.status;
        error.token = token;
        throw error;
      }
      if (!payload || typeof payload !== "object" || !payload.session) {
        const error = new Error("The taskbar returned an unreadable state.");
        error.status = response.status;
        throw error;
      }
      return payload;
    }

    function schedule(delay) {
      if (pollTimer) view.clearTimeout(pollTimer);
      pollTimer = view.setTimeout(() => {
        pollTimer = null;
        refresh();
      }, delay);
    }

    // refresh reads GET /state once. Concurrent triggers coalesce into one
    // follow-up read; a read that started before a mutation is discarded.
    async function refresh() {
      if (readInFlight) {
        readAgain = true;
        return;
      }
      readInFlight = true;
      const started = generation;
      try {
        const next = await request("GET", "/state", undefined, READ_TIMEOUT_MS);
        readFailures = 0;
        if (started === generation && !mutationPending) {
          const before = snapshot;
          snapshot = next;
          if (before && lifecycleKey(before) !== lifecycleKey(next)) notifyTabs();
          disconnected = false;
          ui.retry.hidden = true;
          ui.retry.textContent = "";
          render();
        } else if (disconnected) {
          disconnected = false;
          render();
        }
        schedule(isActive(snapshot) ? ACTIVE_POLL_MS : STABLE_POLL_MS);
      } catch (error) {
        readFailures += 1;
        // One isolated network failure stays quiet; repeated failures or
        // any HTTP/parse error show the retry indication.
        if (!error.network || readFailures > 1) {
          const text = error.network ? CONNECTION_LOST_TEXT : `${error.message} Retrying…`;
          if (ui.retry.textContent !== text) {
            ui.retry.textContent = text;
            announce(text);
          }
          ui.retry.hidden = false;
        }
        // Repeated failures: the status, the launcher and Run/Stop stop
        // claiming a state the taskbar can no longer confirm.
        if (readFailures >= CONNECTION_FAILURES && !disconnected) {
          disconnected = true;
          render();
        }
        schedule(Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (readFailures - 1)));
      } finally {
        readInFlight = false;
        if (readAgain) {
          readAgain = false;
          refresh();
        }
      }
    }

    // mutate sends one POST/DELETE exactly once; any failure is reconciled by
    // one GET /state, never by repeating the mutation.
    // Each call is one user action with its own Idempotency-Key: a resend of
    // the request (the browser's own, on a reset connection) carries the same
    // key, so the server can answer it with the first outcome.
    async function mutate(method, path, body) {
      if (mutationPending) return;
      mutationPending = true;
      generation += 1;
      clientError = "";
      renderControls();
      const key = idempotencyKey();
      try {
        const next = await request(method, path, body, MUTATION_TIMEOUT_MS, key);
        generation += 1;
        snapshot = next;
        mutationPending = false;
        render();
        schedule(isActive(snapshot) ? ACTIVE_POLL_MS : STABLE_POLL_MS);
        notifyTabs();
        return true;
      } catch (error) {
        generation += 1;
        mutationPending = false;
        clientError = error.network ? UNCERTAIN_TEXT : error.message;
        if (error.code === "invalid_csrf") {
          // Re-read the bootstrap (a body swap may have rotated it) so the
          // user's retry carries the current token; never resend here.
          bootstrap = readBootstrap(document, bootstrap);
          if (bootstrap.csrfToken !== error.token) clientError = CSRF_ROTATED_TEXT;
        }
        render();
        announce(`Error. ${clientError}`);
        await refresh();
        notifyTabs();
        return false;
      }
    }

    // idempotencyKey is a random (version 4) UUID; crypto.getRandomValues
    // works outside secure contexts too (remote HTTP access).
    function idempotencyKey() {
      const bytes = new Uint8Array(16);
      view.crypto.getRandomValues(bytes);
      bytes[6] = (bytes[6] & 0x0f) | 0x40;
      bytes[8] = (bytes[8] & 0x3f) | 0x80;
      const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }

    // lifecycleKey names what other tabs must learn about at once: session
    // identity and state, task identity and state (not streamed output).
    function lifecycleKey(value) {
      const session = value && value.session ? value.session : {};
      const task = value && value.task ? value.task : {};
      return [session.status, session.id, task.id, task.status].join("\u0000");
    }

    // --- same-browser tab coordination. The contract's polling stays the
    // authority; a notice on a BroadcastChannel named after the mount base only
    // makes other tabs read GET /state now instead of at their next poll.
    let channel = null;
    let channelName = "";
    function tabChannel() {
      const name = `pi-browser-taskbar:${bootstrap.mountBase}`;
      if (name === channelName) return channel;
      if (channel) channel.close();
      channel = null;
      channelName = name;
      if (typeof view.BroadcastChannel !== "function") return null;
      try {
        channel = new view.BroadcastChannel(name);
      } catch (_error) {
        return null;
      }
      channel.addEventListener("message", (event) => {
        if (event.data && event.data.type === NOTICE) refresh();
      });
      return channel;
    }

    function notifyTabs() {
      const target = tabChannel();
      if (!target) return;
      try {
        target.postMessage({ type: NOTICE });
      } catch (_error) {
        // A closed channel only loses the hint; polling still converges.
      }
    }

    // --- rendering.
    function render() {
      // The body keeps the feedback in view when it was in view before (or a
      // new task appears), like a log; the pinned footer never moves either way.
      const body = ui.body;
      const follow = !ui.panel.hidden && ui.feedback.getBoundingClientRect().bottom <= body.getBoundingClientRect().bottom + 4;
      const taskID = snapshot && snapshot.task ? snapshot.task.id : "";
      const newTask = taskID !== "" && taskID !== renderedTask;
      renderedTask = taskID;
      const shown = disconnected
        ? { word: DISCONNECTED_TEXT, text: DISCONNECTED_TEXT, state: "disconnected" }
        : visibleState(snapshot);
      const session = snapshot && snapshot.session ? snapshot.session : { status: "starting" };
      const task = snapshot ? snapshot.task : null;
      ui.status.setAttribute("data-state", shown.state);
      host.setAttribute("data-state", shown.state);
      ui.statusText.textContent = shown.text;
      ui.launcherStatus.textContent = shown.text;
      const model = session.model ? `Model: ${session.model}` : "Local Pi session";
      if (ui.model.textContent !== model) {
        ui.model.textContent = model;
        ui.model.title = model;
      }

      const activity = task && task.activity ? task.activity : connectingActivity(session);
      ui.activity.textContent = activity;
      ui.activity.hidden = !activity;
      const output = task && typeof task.output === "string" ? task.output : "";
      trackToolBreaks(task);
      const outputKey = `${output}\u0000${breaks.at.join(",")}`;
      if (renderedOutput !== outputKey) {
        renderedOutput = outputKey;
        const atBottom = ui.output.scrollTop + ui.output.clientHeight >= ui.output.scrollHeight - 4;
        renderOutput(output);
        ui.output.hidden = !output;
        if (atBottom) ui.output.scrollTop = ui.output.scrollHeight;
      }
      ui.output.hidden = !output;
      ui.truncated.hidden = !(task && task.output_truncated === true);

      let error = "";
      if (task && task.status === "failed") error = `Task failed. ${task.error || "Pi did not complete the task."}`;
      else if (task && task.error) error = task.error;
      else if (session.status !== "ready" && session.status !== "busy" && session.error) error = session.error;
      if (clientError) error = error ? `${clientError} ${error}` : clientError;
      ui.error.textContent = error;
      ui.error.hidden = !error;
      ui.cancelWarning.hidden = !(task && ["running", "cancelling", "cancelled"].includes(task.status));
      ui.remote.hidden = !(bootstrap.remoteAccess && view.location.protocol === "http:");

      if (follow || newTask) revealFeedback();

      const key = [shown.text, task ? task.id : "", task ? task.status : "", activity, error].join("\u0000");
      if (key !== announcedKey) {
        const previous = announcedKey;
        announcedKey = key;
        if (previous !== "") announce(announcement(shown, task, activity, error));
      }
      renderControls();
    }

    // trackToolBreaks notes where a tool call split the task's output. The
    // output is the plain concatenation of Pi's text (reference §7), so the
    // client marks the boundary itself: while a tool runs no text arrives,
    // so the length seen with a "Running …" activity is exact; when only the
    // "Finished …"/"Tool failed …" activity was seen, the length before it is
    // used. Truncated output (older text cut) shows no boundaries.
    function trackToolBreaks(task) {
      if (!task) return;
      if (breaks.task !== task.id) {
        breaks = { task: task.id, at: [] };
        seenOutput = null;
      }
      const length = typeof task.output === "string" ? task.output.length : 0;
      const activity = typeof task.activity === "string" ? task.activity : "";
      if (task.output_truncated === true) {
        if (breaks.at.length > 0) {
          breaks.at = [];
          saveState();
        }
      } else if (/^(?:Running|Finished|Tool failed) /.test(activity) && seenOutput && seenOutput.activity !== activity) {
        const at = activity.startsWith("Running ") ? length : Math.min(seenOutput.length, length);
        const last = breaks.at.length > 0 ? breaks.at[breaks.at.length - 1] : 0;
        if (at > last) {
          breaks.at.push(at);
          saveState();
        }
      }
      seenOutput = { activity, length };
    }

    // renderOutput shows the output with a visual break at each tool-call
    // boundary; the breaks carry no text, so textContent stays the output.
    function renderOutput(output) {
      ui.output.textContent = "";
      let from = 0;
      for (const at of breaks.at) {
        if (at <= from || at >= output.length) continue;
        const separator = document.createElement("span");
        separator.className = "pi-output-break";
        separator.setAttribute("data-output-break", "");
        separator.setAttribute("aria-hidden", "true");
        ui.output.append(output.slice(from, at), separator);
        from = at;
      }
      ui.output.append(output.slice(from));
    }

    // revealFeedback scrolls the panel body (never the page) just enough to
    // show the feedback's end without hiding its start.
    function revealFeedback() {
      const body = ui.body;
      if (ui.panel.hidden || body.scrollHeight <= body.clientHeight) return;
      const from = body.getBoundingClientRect();
      const to = ui.feedback.getBoundingClientRect();
      body.scrollTop += Math.max(0, Math.min(to.bottom - from.bottom, to.top - from.top));
    }

    function announcement(shown, task, activity, error) {
      if (task && task.status === "completed" && shown.word === "Finished") {
        return activity ? `Task finished. ${activity}` : "Task finished.";
      }
      if (task && task.status === "failed" && shown.word === "Finished") return error;
      if (task && task.status === "cancelled" && shown.word === "Stopped") {
        return "Task stopped. File changes already made were not rolled back.";
      }
      if (shown.state === "disconnected") return "Connection lost. Pi's state is unknown until the taskbar reconnects.";
      if (shown.word === "Ready") return error ? `Pi is ready. ${error}` : "Pi is ready.";
      if (shown.word === "Working") return activity ? `Working. ${activity}` : "Working.";
      return error ? `${shown.text}. ${error}` : `${shown.text}. ${activity}`;
    }

    function scopeText() {
      if (marks.length === 0) return "Whole page";
      return marks.length === 1 ? "1 marked element" : `${marks.length} marked elements`;
    }

    function promptProblem() {
      const prompt = normalizePrompt(ui.prompt.value);
      if (!prompt) return "empty";
      const bytes = utf8Length(prompt);
      return bytes > PROMPT_BYTES ? `The instruction is ${bytes} bytes; the limit is ${PROMPT_BYTES}.` : "";
    }

    function renderControls() {
      const session = snapshot && snapshot.session ? snapshot.session.status : "starting";
      const task = snapshot ? snapshot.task : null;
      const running = task && task.status === "running";
      const cancelling = task && task.status === "cancelling";
      const active = isWorking(snapshot);
      const problem = promptProblem();
      ui.prompt.disabled = active;
      ui.mark.disabled = active || marks.length >= MAX_MARKS;
      ui.clear.disabled = active;
      ui.clear.hidden = marks.length === 0;
      for (const button of ui.marks.querySelectorAll("button")) button.disabled = active;
      // Run keeps focus across state changes, so it is never natively
      // disabled: aria-disabled carries the state and the handler checks it.
      let runText = "Run with Pi";
      let runOff = mutationPending || disconnected || session !== "ready" || problem !== "";
      let meaning = "run";
      if (running) {
        runText = "Stop task";
        runOff = mutationPending || disconnected;
        meaning = "stop";
      } else if (cancelling) {
        runText = "Stopping…";
        runOff = true;
        meaning = "stopping";
      }
      if (meaning !== runMeaning) {
        if (meaning === "run") runCalmUntil = view.performance.now() + RUN_CALM_MS;
        runMeaning = meaning;
      }
      ui.run.textContent = runText;
      ui.run.setAttribute("aria-disabled", String(runOff));
      const canReset = session === "ready" && !running && !cancelling && !mutationPending;
      if (!canReset && !ui.resetConfirm.hidden) hideResetConfirm(false);
      ui.reset.disabled = !canReset;
      if (!copiedTimer) ui.copy.textContent = "Copy prompt";
      ui.copy.disabled = active || problem !== "";
      ui.promptHelp.textContent = problem === "empty" ? "" : problem;
      ui.promptHelp.hidden = problem === "" || problem === "empty";
      ui.scope.textContent = scopeText();
      const open = !ui.panel.hidden;
      ui.launcher.setAttribute("aria-expanded", String(open));
      ui.launcherScope.textContent = `. ${scopeText()}.`;
    }

    // --- panel.
    function setOpen(open, focusTarget) {
      ui.panel.hidden = !open;
      host.toggleAttribute("data-open", open);
      renderControls();
      saveState();
      scheduleOutlines();
      if (open) {
        // The newest output first, as it streams in (the closed panel has no layout).
        ui.output.scrollTop = ui.output.scrollHeight;
        (ui.prompt.disabled ? ui.run : ui.prompt).focus();
        // While Pi works the instruction is locked: show the progress instead.
        if (ui.prompt.disabled) revealFeedback();
      } else {
        stopMarking(false);
        if (focusTarget !== false) ui.launcher.focus();
      }
    }

    ui.launcher.addEventListener("click", () => setOpen(ui.panel.hidden));
    ui.close.addEventListener("click", () => setOpen(false));
    shadow.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !ui.resetConfirm.hidden) {
        event.preventDefault();
        hideResetConfirm(true);
        return;
      }
      if (event.key === "Escape" && !ui.panel.hidden && !marking) {
        event.preventDefault();
        setOpen(false);
      }
    });
    ui.prompt.addEventListener("input", () => {
      clientError = "";
      renderControls();
      saveState();
    });

    // --- session reset (seed "Session reset"): asked once, sent once.
    function hideResetConfirm(focusReset) {
      ui.resetConfirm.hidden = true;
      ui.reset.setAttribute("aria-expanded", "false");
      if (focusReset) ui.reset.focus();
    }

    ui.reset.setAttribute("aria-expanded", "false");
    ui.reset.setAttribute("aria-controls", "pi-reset-confirm");
    ui.resetConfirm.id = "pi-reset-confirm";
    ui.reset.addEventListener("click", () => {
      if (ui.reset.disabled) return;
      ui.resetConfirm.hidden = false;
      ui.reset.setAttribute("aria-expanded", "true");
      ui.resetYes.focus();
    });
    ui.resetNo.addEventListener("click", () => hideResetConfirm(true));
    ui.resetYes.addEventListener("click", async () => {
      hideResetConfirm(false);
      ui.prompt.focus();
      if (await mutate("POST", "/session/reset")) announce("Started a fresh Pi session.");
    });

    // --- task actions.
    // A press that began on Stop (or Stopping…) stays a stop: when the task
    // ends between press and release, or just before a click or key press,
    // Run has replaced Stop under the pointer and the click starts nothing.
    ui.run.addEventListener("pointerdown", () => {
      pressedMeaning = runMeaning;
    });
    ui.run.addEventListener("click", () => {
      const pressed = pressedMeaning;
      pressedMeaning = "";
      if (ui.run.getAttribute("aria-disabled") === "true") return;
      if (runMeaning === "run" && (pressed === "stop" || pressed === "stopping" || view.performance.now() < runCalmUntil)) {
        announce("The task had already ended; nothing was started.");
        return;
      }
      const task = snapshot ? snapshot.task : null;
      if (task && task.status === "running") {
        mutate("DELETE", `/tasks/${encodeURIComponent(task.id)}`).then(() => ui.run.focus());
        return;
      }
      const prompt = normalizePrompt(ui.prompt.value);
      if (!prompt || utf8Length(prompt) > PROMPT_BYTES) return;
      validateMarks();
      const context = capture();
      saveState();
      mutate("POST", "/tasks", { prompt, context });
    });

    ui.copy.addEventListener("click", async () => {
      const prompt = normalizePrompt(ui.prompt.value);
      if (!prompt || utf8Length(prompt) > PROMPT_BYTES) return;
      validateMarks();
      const text = envelope(prompt, capture());
      let copied = false;
      try {
        if (view.navigator.clipboard && view.navigator.clipboard.writeText) {
          await view.navigator.clipboard.writeText(text);
          copied = true;
        }
      } catch (_error) {
        copied = false;
      }
      if (!copied) {
        const area = document.createElement("textarea");
        area.value = text;
        area.setAttribute("readonly", "");
        area.className = "pi-sr-only";
        ui.root.appendChild(area);
        area.select();
        try {
          copied = document.execCommand("copy");
        } catch (_error) {
          copied = false;
        }
        area.remove();
        ui.copy.focus();
      }
      if (copied) {
        ui.copy.textContent = "Copied";
        if (copiedTimer) view.clearTimeout(copiedTimer);
        copiedTimer = view.setTimeout(() => {
          copiedTimer = null;
          renderControls();
        }, 2000);
        announce("Prompt copied to the clipboard.");
      } else {
        clientError = "The prompt could not be copied to the clipboard.";
        render();
        announce(`Error. ${clientError}`);
      }
    });

    function capture() {
      return captureContext(document, { host, marks, projectApp: bootstrap.projectApp });
    }

    // --- marks.
    function renderMarks() {
      ui.marks.textContent = "";
      marks.forEach((mark, index) => {
        const item = document.createElement("li");
        const text = document.createElement("span");
        text.className = "pi-mark-text";
        const label = document.createElement("span");
        label.className = "pi-mark-label";
        label.textContent = `${index + 1}. ${mark.selector}`;
        text.appendChild(label);
        if (mark.name) {
          const name = document.createElement("span");
          name.className = "pi-mark-name";
          name.setAttribute("data-mark-name", "");
          name.textContent = mark.name;
          text.appendChild(name);
        }
        const remove = document.createElement("button");
        remove.type = "button";
        remove.className = "pi-button pi-remove";
        remove.textContent = "Remove";
        remove.setAttribute("aria-label", `Remove mark ${index + 1}: ${mark.selector}${mark.name ? ` (${mark.name})` : ""}`);
        remove.addEventListener("click", () => removeMark(index));
        item.append(text, remove);
        ui.marks.appendChild(item);
      });
      ui.marks.hidden = marks.length === 0;
      renderControls();
      scheduleOutlines();
      saveState();
    }

    // --- per-tab state across a full reload (session storage, this mount
    // base): panel open, draft, marks (by selector, on the same page) and the
    // current task's output breaks. Restored only when the page was reloaded.
    function storageKey() {
      return STORAGE_PREFIX + bootstrap.mountBase;
    }

    function pageKey() {
      return view.location.pathname + view.location.search;
    }

    function saveState() {
      try {
        view.sessionStorage.setItem(
          storageKey(),
          JSON.stringify({
            v: 1,
            page: pageKey(),
            open: !ui.panel.hidden,
            draft: ui.prompt.value,
            marks: marks.map((mark) => mark.selector).concat(pendingMarks).slice(0, MAX_MARKS),
            breaks,
          }),
        );
      } catch (_error) {
        // Storage disabled or full: a reload then starts fresh.
      }
    }

    function savedState() {
      try {
        const entry = view.performance.getEntriesByType("navigation")[0];
        if (!entry || entry.type !== "reload") return null;
        const saved = JSON.parse(view.sessionStorage.getItem(storageKey()) || "null");
        return saved && saved.v === 1 && saved.page === pageKey() ? saved : null;
      } catch (_error) {
        return null;
      }
    }

    function restoreState() {
      const saved = savedState();
      if (!saved) return;
      if (typeof saved.draft === "string") ui.prompt.value = saved.draft;
      const stored = saved.breaks;
      if (stored && typeof stored.task === "string" && Array.isArray(stored.at)) {
        breaks = { task: stored.task, at: stored.at.filter((at) => Number.isSafeInteger(at) && at > 0).slice(0, 1000) };
      }
      if (Array.isArray(saved.marks)) {
        pendingMarks = saved.marks.filter((selector) => typeof selector === "string").slice(0, MAX_MARKS);
        restoreUntil = view.performance.now() + RESTORE_MARKS_MS;
        restoreMarks();
      }
      if (saved.open === true) setOpen(true);
      else renderControls();
    }

    // restoreMarks marks again each saved selector that names exactly one
    // capturable element; the rest wait (an app may render late) until
    // RESTORE_MARKS_MS after the reload.
    function restoreMarks() {
      if (pendingMarks.length === 0) return;
      const left = [];
      let added = false;
      for (const selector of pendingMarks) {
        let found = [];
        try {
          found = document.querySelectorAll(selector);
        } catch (_error) {
          continue;
        }
        const element = found.length === 1 ? found[0] : null;
        if (!element || !capturable(element, host)) {
          left.push(selector);
          continue;
        }
        if (marks.length < MAX_MARKS && !marks.some((mark) => mark.element === element || mark.selector === selector)) {
          marks.push({ element, selector, name: markName(element) });
          added = true;
        }
      }
      pendingMarks = view.performance.now() < restoreUntil ? left : [];
      if (added) renderMarks();
    }

    function removeMark(index) {
      marks.splice(index, 1);
      renderMarks();
      announce(`Mark removed. ${scopeText()}.`);
      const buttons = ui.marks.querySelectorAll("button");
      (buttons[Math.min(index, buttons.length - 1)] || ui.mark).focus();
    }

    ui.clear.addEventListener("click", () => {
      marks = [];
      renderMarks();
      announce("All marks cleared. Whole page.");
      ui.mark.focus();
    });

    function addMark(element) {
      if (!capturable(element, host)) {
        announce("This element is not part of the captured page. Choose another element.");
        return false;
      }
      if (marks.length >= MAX_MARKS) {
        announce(`Up to ${MAX_MARKS} elements can be marked.`);
        return false;
      }
      const selector = selectorFor(document, element);
      if (!selector) {
        announce("This element could not be identified uniquely.");
        return false;
      }
      if (marks.some((mark) => mark.element === element || mark.selector === selector)) {
        announce("That element is already marked.");
        return true;
      }
      marks.push({ element, selector, name: markName(element) });
      renderMarks();
      revealMarked(element);
      announce(`Marked ${marks.length}: ${selector}. ${scopeText()}.`);
      return true;
    }

    // markName is a short local label for a mark: the element's accessible
    // name or visible text, cut at MARK_NAME_CHARS code points. It is shown
    // only in the panel and never sent (the context captures its own fields).
    function markName(element) {
      let text = structural(accessibleName(element));
      if (!text && !NO_TEXT_TAGS.has(element.localName)) {
        text = structural(typeof element.innerText === "string" ? element.innerText : element.textContent);
      }
      const points = Array.from(text);
      return points.length > MARK_NAME_CHARS ? `${points.slice(0, MARK_NAME_CHARS - 1).join("").trimEnd()}…` : text;
    }

    // revealMarked scrolls the page, when it can, so a newly marked element is
    // not hidden behind the open composer: into the band above the panel.
    function revealMarked(element) {
      view.requestAnimationFrame(() => {
        if (ui.panel.hidden || !element.isConnected) return;
        const panel = ui.panel.getBoundingClientRect();
        const rect = element.getBoundingClientRect();
        const covered = rect.left < panel.right && rect.right > panel.left && rect.top < panel.bottom && rect.bottom > panel.top;
        if (!covered) return;
        const band = panel.top - 16;
        if (rect.height > band - 16) return;
        const by = rect.bottom - band;
        if (by > 0) view.scrollBy({ top: by, left: 0, behavior: "instant" });
      });
    }

    function insideHost(event) {
      return event.composedPath().includes(host);
    }

    function onMarkClick(event) {
      if (insideHost(event)) return;
      event.preventDefault();
      event.stopPropagation();
      event.stopImmediatePropagation();
      const target = event.target && event.target.nodeType === 1 ? event.target : event.target && event.target.parentElement;
      if (addMark(target)) {
        stopMarking(false);
        ui.prompt.focus();
      }
    }

    function onMarkKey(event) {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        event.stopImmediatePropagation();
        stopMarking(true);
        announce("Marking cancelled.");
        return;
      }
      if ((event.key === "Enter" || event.key === " ") && !insideHost(event)) {
        event.preventDefault();
        event.stopPropagation();
        event.stopImmediatePropagation();
        if (addMark(event.target)) {
          stopMarking(false);
          ui.prompt.focus();
        }
      }
    }

    // --- frames: a frame's elements are not part of the captured page, so
    // marking inside one is refused with guidance. Same-origin frame
    // documents are listened to while marking (Escape cancels from there
    // too); focus moving into any other frame refuses at once.
    function refuseFrame() {
      stopMarking(true);
      clientError = FRAME_TEXT;
      render();
      announce(FRAME_TEXT);
    }

    function onFrameKey(event) {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        stopMarking(true);
        announce("Marking cancelled.");
      } else if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        event.stopPropagation();
        refuseFrame();
      }
    }

    function onFramePointer(event) {
      event.preventDefault();
      event.stopPropagation();
      if (event.type === "click") refuseFrame();
    }

    const frameListeners = [
      ["keydown", onFrameKey],
      ["mousedown", onFramePointer],
      ["click", onFramePointer],
    ];

    function listenToFrames() {
      frameDocs = [];
      for (const frame of document.querySelectorAll("iframe, frame")) {
        let frameDocument = null;
        try {
          frameDocument = frame.contentDocument;
        } catch (_error) {
          frameDocument = null;
        }
        if (!frameDocument) continue;
        for (const [type, listener] of frameListeners) frameDocument.addEventListener(type, listener, true);
        frameDocs.push(frameDocument);
      }
    }

    function unlistenToFrames() {
      for (const frameDocument of frameDocs) {
        for (const [type, listener] of frameListeners) frameDocument.removeEventListener(type, listener, true);
      }
      frameDocs = [];
    }

    function onWindowBlur() {
      view.setTimeout(() => {
        const active = document.activeElement;
        if (!marking || !active || (active.localName !== "iframe" && active.localName !== "frame")) return;
        let frameDocument = null;
        try {
          frameDocument = active.contentDocument;
        } catch (_error) {
          frameDocument = null;
        }
        if (!frameDocument || !frameDocs.includes(frameDocument)) refuseFrame();
      }, 0);
    }

    function swallow(event) {
      if (!insideHost(event)) {
        event.preventDefault();
        event.stopPropagation();
      }
    }

    function onHover(event) {
      if (insideHost(event)) return;
      hovered = event.target && event.target.nodeType === 1 ? event.target : null;
      scheduleOutlines();
    }

    const markListeners = [
      ["click", onMarkClick],
      ["keydown", onMarkKey],
      ["keyup", (event) => (event.key === " " || event.key === "Enter") && swallow(event)],
      ["mousedown", swallow],
      ["pointerover", onHover],
      ["focusin", onHover],
    ];

    function startMarking() {
      if (marking || ui.mark.disabled) return;
      marking = true;
      ui.mark.setAttribute("aria-pressed", "true");
      ui.markHelp.hidden = false;
      host.setAttribute("data-marking", "");
      for (const [type, listener] of markListeners) document.addEventListener(type, listener, true);
      listenToFrames();
      view.addEventListener("blur", onWindowBlur);
      announce(MARK_HELP);
    }

    function stopMarking(focusMark) {
      if (!marking) return;
      marking = false;
      hovered = null;
      ui.mark.setAttribute("aria-pressed", "false");
      ui.markHelp.hidden = true;
      host.removeAttribute("data-marking");
      for (const [type, listener] of markListeners) document.removeEventListener(type, listener, true);
      unlistenToFrames();
      view.removeEventListener("blur", onWindowBlur);
      scheduleOutlines();
      if (focusMark) ui.mark.focus();
    }

    ui.mark.addEventListener("click", () => (marking ? stopMarking(true) : startMarking()));

    // validateMarks drops marks whose element left the page or whose selector
    // no longer names exactly that element (seed "Browser reconciliation").
    function validateMarks() {
      const kept = marks.filter(
        (mark) => mark.element.isConnected && matchesOnly(document, mark.selector, mark.element),
      );
      if (kept.length !== marks.length) {
        const dropped = marks.length - kept.length;
        const focusWasInMarks = shadow.activeElement && ui.marks.contains(shadow.activeElement);
        marks = kept;
        renderMarks();
        announce(dropped === 1 ? `A marked element changed and its mark was removed. ${scopeText()}.` : `${dropped} marked elements changed and their marks were removed. ${scopeText()}.`);
        if (focusWasInMarks) (ui.marks.querySelector("button") || ui.mark).focus();
      }
      scheduleOutlines();
    }

    function scheduleOutlines() {
      if (outlineFrame) return;
      outlineFrame = view.requestAnimationFrame(() => {
        outlineFrame = 0;
        drawOutlines();
      });
    }

    function drawOutlines() {
      ui.outlines.textContent = "";
      const panel = ui.panel.hidden ? null : ui.panel.getBoundingClientRect();
      const underPanel = (x, y) => panel && x >= panel.left && x <= panel.right && y >= panel.top && y <= panel.bottom;
      const boxes = marks.map((mark, index) => ({ element: mark.element, label: String(index + 1), kind: "mark" }));
      if (marking && hovered && !marks.some((mark) => mark.element === hovered) && hovered !== document.body) {
        boxes.push({ element: hovered, label: "", kind: "hover" });
      }
      for (const box of boxes) {
        if (!box.element.isConnected) continue;
        const rect = box.element.getBoundingClientRect();
        const outline = document.createElement("div");
        outline.className = `pi-outline pi-outline-${box.kind}`;
        outline.style.left = `${rect.left}px`;
        outline.style.top = `${rect.top}px`;
        outline.style.width = `${rect.width}px`;
        outline.style.height = `${rect.height}px`;
        if (box.label) {
          const badge = document.createElement("span");
          // The number stays readable: it moves to the right-hand corner when
          // the open composer covers the left-hand one.
          badge.className = underPanel(rect.left, rect.top) ? "pi-badge pi-badge-end" : "pi-badge";
          badge.textContent = box.label;
          outline.appendChild(badge);
        }
        ui.outlines.appendChild(outline);
        if (box.label) keepInViewport(outline.firstChild);
      }
    }

    // keepInViewport moves a mark badge back inside the viewport (2 px in)
    // when its corner position would put it past a page edge.
    function keepInViewport(badge) {
      const rect = badge.getBoundingClientRect();
      const width = document.documentElement.clientWidth || view.innerWidth;
      const height = document.documentElement.clientHeight || view.innerHeight;
      const shift = (low, high, limit) => (low < 2 ? 2 - low : high > limit - 2 ? Math.max(2 - low, limit - 2 - high) : 0);
      const dx = shift(rect.left, rect.right, width);
      const dy = shift(rect.top, rect.bottom, height);
      if (dx !== 0 || dy !== 0) badge.style.transform = `translate(${dx}px, ${dy}px)`;
    }

    // --- host navigation (seed "Browser reconciliation and host navigation").
    function ensureAttached() {
      if (document.body && host.parentNode !== document.body) document.body.appendChild(host);
    }

    const observer = new view.MutationObserver((records) => {
      if (!host.isConnected || host.parentNode !== document.body) ensureAttached();
      if (pendingMarks.length > 0) restoreMarks();
      if (marks.length > 0 && !validateQueued && records.length > 0) {
        validateQueued = true;
        view.queueMicrotask(() => {
          validateQueued = false;
          validateMarks();
        });
      } else {
        scheduleOutlines();
      }
    });
    observer.observe(document.documentElement, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ["id", "data-testid"],
    });

    const afterNavigation = () => {
      ensureAttached();
      validateMarks();
      refresh();
    };
    document.addEventListener("turbo:before-render", (event) => {
      const newBody = event.detail && event.detail.newBody;
      if (newBody && newBody.nodeType === 1) newBody.appendChild(host);
    });
    for (const type of ["turbo:load", "turbo:render", "phx:page-loading-stop"]) {
      document.addEventListener(type, afterNavigation);
    }
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") refresh();
    });
    // An open channel would keep the page out of the back/forward cache.
    view.addEventListener("pagehide", () => {
      if (channel) channel.close();
      channel = null;
      channelName = "";
    });
    view.addEventListener("pageshow", (event) => {
      if (!event.persisted) return;
      tabChannel();
      refresh();
    });
    view.addEventListener("scroll", scheduleOutlines, { capture: true, passive: true });
    view.addEventListener("resize", scheduleOutlines, { passive: true });

    function applyTheme() {
      const root = document.documentElement;
      const theme = ["data-theme", "data-bs-theme", "data-color-scheme"]
        .map((name) => String(root.getAttribute(name) || "").toLowerCase())
        .find((value) => value === "dark" || value === "light");
      if (theme) host.setAttribute("data-theme", theme);
      else host.removeAttribute("data-theme");
    }

    const controller = Object.freeze({
      version: VERSION,
      element: host,
      refresh,
      reconcile() {
        bootstrap = readBootstrap(document, bootstrap);
        tabChannel();
        applyTheme();
        ensureAttached();
        validateMarks();
        render();
        refresh();
      },
    });
    host.piBrowserTaskbar = controller;
    applyTheme();
    document.body.appendChild(host);
    tabChannel();
    restoreState();
    render();
    refresh();
    return controller;
  }

  const api = Object.freeze({
    contractVersion: CONTRACT_VERSION,
    version: VERSION,
    mount: () => mount(document, fallbackBootstrap),
    envelope,
    canonicalJSON,
    sourceHint: (element, projectApp) => sourceHint(element, projectApp, null),
    captureContext: (elements, projectApp) => {
      const host = document.getElementById(HOST_ID);
      const marks = (elements || []).map((element) => ({ element, selector: selectorFor(document, element) }));
      return captureContext(document, { host, marks, projectApp });
    },
    selectorFor: (element) => selectorFor(document, element),
  });

  const fallbackBootstrap = {
    mountBase: scriptMountBase() || DEFAULT_MOUNT,
    csrfToken: "",
    remoteAccess: false,
    projectApp: null,
  };
  globalThis.PiBrowserTaskbar = api;

  // A page shown inside a frame gets no taskbar of its own: the top-level
  // page has one, and marking covers only the top-level document.
  let framed = true;
  try {
    framed = window.self !== window.top;
  } catch (_error) {
    framed = true;
  }
  hideBootstrap(document.getElementById(BOOTSTRAP_ID));
  const start = () => {
    if (document.body && !framed) mount(document, fallbackBootstrap);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
  else start();
})();
