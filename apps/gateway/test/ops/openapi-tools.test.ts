/**
 * The description document as operators' tools take it: Redocly's linter with its recommended
 * rules finds no error (its warnings are printed), every operation has a unique camelCase
 * `operationId`, the schemas use only standard keywords, and openapi-typescript generates types
 * from it that a TypeScript client compiles against (in a temp dir; nothing generated is kept).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { foreignKeywords } from "../../src/openapi/standard-schema";
import { startHarness, type Harness } from "../harness";

const BIN = join(import.meta.dir, "../../node_modules/.bin");
const STEP_MS = 120_000;

let h: Harness;
let dir: string;
let text: string;
let doc: {
  paths: Record<string, Record<string, { operationId?: string }>>;
  components: { schemas: Record<string, unknown> };
  servers?: unknown[];
  tags: { name: string; description?: string }[];
};

beforeAll(async () => {
  h = await startHarness();
  text = await (await fetch(`${h.url}/openapi.json`)).text();
  doc = JSON.parse(text);
  dir = mkdtempSync(join(tmpdir(), "turnpike-openapi-"));
});
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface LintProblem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { pointer: string }[];
}

/** `redocly lint` with the recommended rules on a document; its problems. */
function lint(name: string, body: string): LintProblem[] {
  const file = join(dir, name);
  writeFileSync(file, body);
  const run = Bun.spawnSync(
    [process.execPath, join(BIN, "redocly"), "lint", file, "--extends=recommended", "--format=json"],
    {
      // No telemetry, no update check: the test reads a local file and reaches nothing else.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const out = run.stdout.toString();
  if (!out.trim().startsWith("{"))
    throw new Error(`redocly lint printed no report (exit ${run.exitCode}): ${run.stderr.toString().slice(0, 2000)}`);
  return (JSON.parse(out) as { problems: LintProblem[] }).problems; // the shape of redocly lint --format=json
}

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, id: op.operationId })),
  );

describe("the description document under operators' tools", () => {
  test(
    "Redocly's recommended rules: no error (warnings reported)",
    () => {
      const problems = lint("openapi.json", text);
      const warnings = problems.filter((p) => p.severity === "warn");
      if (warnings.length)
        console.log(
          `redocly lint: ${warnings.length} warnings\n${warnings.map((w) => `  ${w.ruleId}: ${w.message} (${w.location[0]?.pointer})`).join("\n")}`,
        );
      expect(
        problems
          .filter((p) => p.severity === "error")
          .map((p) => `${p.ruleId}: ${p.message} (${p.location[0]?.pointer})`),
      ).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "the lint can fail: a leaked validator keyword and a missing server are errors",
    () => {
      const leaked = structuredClone(doc) as typeof doc & {
        components: { schemas: Record<string, Record<string, unknown>> };
      }; // each schema of the document is an object
      leaked.components.schemas.ChatRequest!.rule = "a validator's note";
      delete leaked.servers;
      const rules = lint("leaked.json", JSON.stringify(leaked))
        .filter((p) => p.severity === "error")
        .map((p) => p.ruleId);
      expect(rules).toEqual(expect.arrayContaining(["struct", "no-empty-servers"]));
    },
    STEP_MS,
  );

  test("every operation has a unique camelCase operationId; tags are described; schemas use standard keywords only", () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(30);
    expect(ops.filter((o) => !/^[a-z][A-Za-z0-9]*$/.test(o.id ?? ""))).toEqual([]);
    expect(new Set(ops.map((o) => o.id)).size).toBe(ops.length);
    expect(ops.find((o) => o.at === "POST /v1/chat/completions")?.id).toBe("postChatCompletions");
    expect(ops.find((o) => o.at === "GET /v1/responses/{id}/input_items")?.id).toBe("getResponsesByIdInputItems");
    expect(doc.tags.filter((t) => !t.description)).toEqual([]);
    expect([...foreignKeywords({ properties: doc.components.schemas })]).toEqual([]);
    // And the operations' own schemas (parameters, bodies, headers).
    const inline: unknown[] = [];
    JSON.stringify(doc.paths, (key, value) => {
      if (key === "schema") inline.push(value);
      return value;
    });
    expect(inline.length).toBeGreaterThan(50);
    expect([...foreignKeywords({ anyOf: inline })]).toEqual([]);
  });

  test(
    "openapi-typescript generates types a client compiles against",
    () => {
      writeFileSync(join(dir, "openapi.json"), text);
      const gen = Bun.spawnSync(
        [process.execPath, join(BIN, "openapi-typescript"), join(dir, "openapi.json"), "-o", join(dir, "turnpike.ts")],
        { stdout: "pipe", stderr: "pipe" },
      );
      expect({ exit: gen.exitCode, stderr: gen.exitCode === 0 ? "" : gen.stderr.toString() }).toEqual({
        exit: 0,
        stderr: "",
      });
      // A client written against the generated types: a request of the document's shape
      // compiles, and one with a model the catalog lacks does not.
      const model = h.gw.deps.catalog.all()[0]!.id;
      const client = (body: string) => `import type { operations } from "./turnpike";
type Body = operations["postChatCompletions"]["requestBody"]["content"]["application/json"];
type Reply = operations["postChatCompletions"]["responses"][200]["content"]["application/json"];
type Refusal = operations["postMessages"]["responses"]["4XX"]["content"]["application/json"];
export const body: Body = ${body};
export const text = (r: Reply) => r.choices[0]?.message.content;
export const reason = (e: Refusal) => e.error.message;
`;
      const tsc = (body: string) => {
        writeFileSync(join(dir, "client.ts"), client(body));
        const run = Bun.spawnSync(
          [
            process.execPath,
            join(BIN, "tsc"),
            "--noEmit",
            "--strict",
            "--skipLibCheck",
            "--target",
            "es2022",
            "--module",
            "esnext",
            "--moduleResolution",
            "bundler",
            join(dir, "client.ts"),
          ],
          { stdout: "pipe", stderr: "pipe" },
        );
        return { exit: run.exitCode, out: run.stdout.toString() };
      };
      expect(tsc(JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }))).toEqual({ exit: 0, out: "" });
      const refused = tsc(JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }));
      expect(refused.exit).not.toBe(0);
      expect(refused.out).toContain("no-such-model");
    },
    STEP_MS,
  );
});
