/**
 * A protocol is one place (decisions/0026): no source file outside `src/protocols/` branches on an
 * upstream protocol's name or keeps a table keyed by it — each such branch is an adapter field
 * (`PROTOCOLS[p].embeddings`, `.batches`, `.serviceTier`, …). The scan reads every source file
 * (tests aside) as text; the second test proves it finds each kind of branch it looks for.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { PROTOCOLS } from "../src/protocols";

const SRC = join(import.meta.dir, "../src");
const NAMES = Object.keys(PROTOCOLS).join("|");

/** What the scan looks for, each with why it is a protocol branch. */
const RULES: { why: string; re: RegExp }[] = [
  {
    // `x.protocol === "chat"`, `protocol !== "messages"`, and a format's `target` (its toPivot's protocol).
    why: "a protocol compared with a protocol's name",
    re: new RegExp(
      `(?:\\w*protocol|\\btarget)\\b\\s*[!=]==?\\s*"(?:${NAMES})"|"(?:${NAMES})"\\s*[!=]==?\\s*[\\w.?]*(?:protocol|\\btarget)\\b`,
      "i",
    ),
  },
  { why: "a switch over a protocol", re: /switch\s*\([^)]*protocol[^)]*\)/i },
  { why: "a table keyed by protocol", re: /Record<\s*Protocol\b/ },
  { why: "a table other than PROTOCOLS read by protocol", re: /\b(?!PROTOCOLS\b)\w+\??\.?\[[\w.?]*protocol\]/i },
  { why: "a list of protocols", re: /\bProtocol\[\]\s*=/ },
  {
    why: "a list of protocol names tested",
    re: new RegExp(`\\[\\s*"(?:${NAMES})"(?:\\s*,\\s*"(?:${NAMES})")*\\s*\\]\\s*\\.includes\\(`),
  },
];

interface Finding {
  file: string;
  line: number;
  why: string;
  text: string;
}

/** The protocol branches of one file's text. */
function branchesIn(file: string, text: string): Finding[] {
  const out: Finding[] = [];
  text.split("\n").forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, "");
    if (/^\s*(\*|\/\*)/.test(code)) return; // a comment names protocols freely
    for (const r of RULES) if (r.re.test(code)) out.push({ file, line: i + 1, why: r.why, text: line.trim() });
  });
  return out;
}

/** Every source file under `dir`, tests and fixtures aside. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === "__fixtures__" ? [] : sources(path);
    return d.name.endsWith(".ts") && !d.name.endsWith(".test.ts") ? [path] : [];
  });
}

test("no source file outside src/protocols/ branches on an upstream protocol's name", () => {
  const files = sources(SRC).filter((f) => !relative(SRC, f).startsWith("protocols/"));
  expect(files.length).toBeGreaterThan(100);
  const found = files.flatMap((f) => branchesIn(relative(SRC, f), readFileSync(f, "utf8")));
  expect(found).toEqual([]);
});

test("the scan finds each kind of protocol branch", () => {
  const bad = [
    'if (target.upstream.protocol === "chat") return x;',
    'if (protocol !== "messages") return;',
    'if ("generate" === entry.protocol) go();',
    'if (target === "responses") return pivot;',
    "switch (entry.protocol) {",
    "const T: Partial<Record<Protocol, Api>> = {};",
    'export const LIST: readonly Protocol[] = ["chat"];',
    'if (["chat", "generate"].includes(p)) ok();',
    "const api = UPSTREAM_BATCH_APIS[upstream.protocol];",
  ];
  expect(bad.map((l) => branchesIn("x.ts", l).length)).toEqual(bad.map(() => 1));
  // Not protocol branches: a URL's scheme, a batch's kind, a format's own pairing, a comment.
  const fine = [
    'if (new URL(issuer).protocol === "http:") warn();',
    'kind: str(row.kind) === "messages" ? "messages" : "openai",',
    "if (target === chatFormat.passthroughProtocol) return pivot;",
    ' * if (protocol === "chat") was how this read before',
    "const embeddings = PROTOCOLS[target.entry.protocol].embeddings;",
  ];
  expect(fine.flatMap((l) => branchesIn("x.ts", l))).toEqual([]);
});
