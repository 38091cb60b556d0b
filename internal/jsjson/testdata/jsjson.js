// jsjson.js: the Node oracle for internal/jsjson.
//
//   node jsjson.js gen    writes golden vectors (JSON) to stdout
//   node jsjson.js serve  answers one JSON request per stdin line with one
//                         JSON response line on stdout
//
// A request is {"src": <base64 bytes>, "sort": bool, "indexFirst": bool,
// "indent": string} (or "indent64": <base64 bytes>, decoded as src is) or
// {"bits": <16 hex digits of a float64>}. The answer is {"out": string},
// {"error": true} when JSON.parse throws, or {"num": Number.prototype.toString}.
"use strict";

// Replaces invalid UTF-8 like jsjson, and keeps a BOM (JSON.parse rejects
// it, as Reencode does).
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

// allKeys collects every object key in v, for JSON.stringify's replacer
// array: with it, each object's members are written in the array's order.
function allKeys(v, set) {
  if (Array.isArray(v)) {
    for (const e of v) allKeys(e, set);
  } else if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) {
      set.add(k);
      allKeys(v[k], set);
    }
  }
  return set;
}

// bare copies v with objects that have no prototype, so a replacer array
// naming "__proto__" finds only own "__proto__" members.
function bare(v) {
  if (Array.isArray(v)) return v.map(bare);
  if (v === null || typeof v !== "object") return v;
  const o = Object.create(null);
  for (const k of Object.keys(v)) o[k] = bare(v[k]);
  return o;
}

// rebuilt copies v with each object's keys inserted in sorted order, which
// JS then lists with array-index keys first (prototype-less objects, so a
// "__proto__" key stays an own member).
function rebuilt(v) {
  if (Array.isArray(v)) return v.map(rebuilt);
  if (v === null || typeof v !== "object") return v;
  const o = Object.create(null);
  for (const k of Object.keys(v).sort()) o[k] = rebuilt(v[k]);
  return o;
}

function stringify(v, sort, indent, indexFirst) {
  if (!sort) return JSON.stringify(v, null, indent);
  if (indexFirst) return JSON.stringify(rebuilt(v), null, indent);
  const keys = [...allKeys(v, new Set())].sort(); // UTF-16 code unit order
  return JSON.stringify(bare(v), keys, indent);
}

function answer(req) {
  if (req.bits !== undefined) {
    const dv = new DataView(new ArrayBuffer(8));
    dv.setBigUint64(0, BigInt("0x" + req.bits));
    return { num: String(dv.getFloat64(0)) };
  }
  let v;
  try {
    v = JSON.parse(decoder.decode(Buffer.from(req.src, "base64")));
  } catch {
    return { error: true };
  }
  const indent = req.indent64 !== undefined ? decoder.decode(Buffer.from(req.indent64, "base64")) : req.indent;
  return { out: stringify(v, req.sort, indent, req.indexFirst) };
}

// mulberry32: a small seeded PRNG so the golden file is reproducible.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (r, a) => a[Math.floor(r() * a.length)];

const keyPool = ["", "a", "b", "B", "aa", "z", "0", "1", "2", "10", "01", "-1", "1.0", "4294967294",
  "4294967295", "9007199254740993", "__proto__", "constructor", "é", "\u00ff", "\ue000", "\uffff",
  "\ud83d\ude00", "\u{10000}", "\u{10ffff}", "\ud800", "\udfff", "key with space", "<&>", "\u2028"];

const unitPool = ["a", "Z", " ", "/", "\"", "\\", "<", ">", "&", "\u007f", "\u0000", "\u0001", "\u0008",
  "\u0009", "\u000a", "\u000b", "\u000c", "\u000d", "\u001f", "\u0085", "\u00a0", "é", "\u2028", "\u2029",
  "\ue000", "\ufeff", "\uffff", "\ufffd", "\ud83d\ude00", "\u{10ffff}", "\ud800", "\udbff", "\udc00", "\udfff", "漢"];

const numPool = ["0", "-0", "1", "-1", "0.1", "0.2", "0.30000000000000004", "1e21", "1e+21", "9.999999999999999e20",
  "999999999999999999999", "100000000000000000000", "1e-6", "1e-7", "0.000001", "0.0000001", "1.5e-7",
  "123456789012345678901234567890", "9007199254740993", "9007199254740992", "-9007199254740993",
  "5e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "1e309", "-1e400", "1e-400", "1E2",
  "1e0", "12.50", "-0.0", "0e5", "2e-7", "123e-20", "1.7976931348623158e308", "4.35", "0.1e1", "100",
  "1152921504606846976", "18446744073709551616", "3.14159265358979323846", "1e21", "1.2e21", "123456789e-15"];

function genString(r) {
  let s = "";
  const n = Math.floor(r() * 6);
  for (let i = 0; i < n; i++) s += pick(r, unitPool);
  return s;
}

// genText writes JSON text with varied spelling: escapes in either case,
// raw or escaped characters, random whitespace.
function genText(r, depth) {
  const ws = () => (r() < 0.2 ? pick(r, [" ", "\t", "\n", "\r\n", "  "]) : "");
  const str = (s) => {
    let out = "\"";
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === "\"" || ch === "\\" || c < 0x20 || (c >= 0xd800 && c <= 0xdfff) || r() < 0.15) {
        for (let j = 0; j < ch.length; j++) {
          let h = ch.charCodeAt(j).toString(16).padStart(4, "0");
          if (r() < 0.5) h = h.toUpperCase();
          out += "\\u" + h;
        }
      } else if (ch === "/" && r() < 0.5) {
        out += "\\/";
      } else {
        out += ch;
      }
    }
    return out + "\"";
  };
  const t = r();
  if (depth > 3 || t < 0.35) {
    const u = r();
    if (u < 0.4) return str(genString(r));
    if (u < 0.8) return pick(r, numPool);
    return pick(r, ["true", "false", "null"]);
  }
  if (t < 0.6) {
    const n = Math.floor(r() * 4);
    const items = [];
    for (let i = 0; i < n; i++) items.push(ws() + genText(r, depth + 1) + ws());
    return "[" + items.join(",") + "]";
  }
  const n = Math.floor(r() * 6);
  const items = [];
  for (let i = 0; i < n; i++) items.push(ws() + str(pick(r, keyPool)) + ws() + ":" + ws() + genText(r, depth + 1) + ws());
  return "{" + items.join(",") + "}";
}

const handSrc = [
  "null", "true", "false", "0", "-0", "\"\"", "[]", "{}", "[[]]", "{\"a\":{}}", " \t\r\n1 ",
  "\"\\u2028\\u2029\"", "\"\u2028\u2029\"", "\"<script>&amp;</script>\"", "\"\\ud800\"", "\"\\uDC00\\uD800\"",
  "\"\\ud83d\\ude00\"", "\"\\ud83d\\u0041\"", "\"\\ud83d\\ud83d\\ude00\"", "\"\\u0000\\u001f\\u007f\\u0080\"",
  "\"\\b\\f\\n\\r\\t\\/\\\\\\\"\"", "\"\\u00e9\\u00E9é\"",
  "{\"b\":1,\"a\":2,\"1\":3,\"0\":4,\"10\":5,\"2\":6}", "{\"a\":1,\"b\":2,\"a\":3}", "{\"x\":1,\"x\":{\"y\":2},\"x\":[3]}",
  "{\"4294967295\":1,\"4294967294\":2,\"01\":3,\"1\":4,\"-1\":5}", "{\"\\ue000\":1,\"\\ud83d\\ude00\":2,\"\\uffff\":3,\"a\":4}",
  "{\"__proto__\":{\"a\":1},\"b\":2}", "{\"\":0,\" \":1}", "[1,[2,[3,{\"a\":[4]}]]]",
  "[1e21,1e-7,1.5e-7,123e-20,1e309,-1e309,5e-324,0.1,100,1e2]",
  "{\"z\":{\"b\":1,\"a\":[{\"d\":1,\"c\":2}]},\"y\":null}",
  "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "-", "1e", "NaN", "Infinity", "'a'", "\"\\x41\"", "\"\t\"",
  "[1 2]", "{\"a\" 1}", "{a:1}", "tru", "nul", "\"abc", "", " ", "\ufeff1", "1 2", "[", "{\"a\":", "\"\\u12\"",
  "\"\\uZZZZ\"", "//c\n1", "[1]x",
];
// Byte-level inputs: invalid UTF-8 and WTF-8 surrogates inside strings.
const handBytes = [
  [0x22, 0xff, 0x22], [0x22, 0xc3, 0x22], [0x22, 0xe2, 0x82, 0x41, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22],
  [0x22, 0xf0, 0x9f, 0x98, 0x22], [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xc0, 0xaf, 0x22],
  [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x2c, 0x22, 0xfe, 0x22, 0x3a, 0x32, 0x7d], [0x22, 0xe0, 0x80, 0x80, 0x22],
];
const indents = ["", "  ", "\t", "--", "0123456789ABC", "\0", "a\0b", "\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00"];

function gen() {
  const r = rng(20261201);
  const srcs = [];
  for (const s of handSrc) srcs.push(Buffer.from(s, "utf8"));
  for (const b of handBytes) srcs.push(Buffer.from(b));
  for (let i = 0; i < 400; i++) srcs.push(Buffer.from(genText(r, 0), "utf8"));
  const cases = [];
  for (const buf of srcs) {
    const src = buf.toString("base64");
    for (const [sort, indexFirst] of [[false, false], [true, false], [true, true]]) {
      const indent = r() < 0.5 ? "" : pick(r, indents);
      cases.push({ src, sort, indexFirst, indent, ...answer({ src, sort, indexFirst, indent }) });
    }
  }
  const numbers = [];
  const dv = new DataView(new ArrayBuffer(8));
  const some = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 1e-6, 123e-20, 2 ** 53, 2 ** 53 + 2, 2 ** 60, 2 ** 64, 1 / 3,
    Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON, NaN, Infinity, -Infinity, 9.999999999999999e20, 1e20, 1.5e300, 5e-7];
  for (const x of some) {
    dv.setFloat64(0, x);
    numbers.push(dv.getBigUint64(0).toString(16).padStart(16, "0"));
  }
  for (let i = 0; i < 600; i++) {
    // Random bit patterns, and values near the notation boundaries.
    if (i % 2 === 0) {
      dv.setUint32(0, Math.floor(r() * 2 ** 32));
      dv.setUint32(4, Math.floor(r() * 2 ** 32));
    } else {
      dv.setFloat64(0, (r() < 0.5 ? -1 : 1) * r() * 10 ** (Math.floor(r() * 60) - 30));
    }
    numbers.push(dv.getBigUint64(0).toString(16).padStart(16, "0"));
  }
  const nums = numbers.map((bits) => ({ bits, ...answer({ bits }) }));
  process.stdout.write(JSON.stringify({ node: process.version, cases, numbers: nums }, null, 1) + "\n");
}

function serve() {
  const rl = require("node:readline").createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on("line", (line) => {
    process.stdout.write(JSON.stringify(answer(JSON.parse(line))) + "\n");
  });
}

if (process.argv[2] === "gen") gen();
else if (process.argv[2] === "serve") serve();
else {
  process.stderr.write("usage: node jsjson.js gen|serve\n");
  process.exit(2);
}
