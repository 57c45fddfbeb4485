/** A config file with several mistakes is refused with all of them at once: file, path and rule each, no stack trace. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config";
import { ConfigError } from "../../src/vocabulary/config-error";

const MISTAKES = `vendors:
  acme:
    protocol: soap
  beta:
    auth: token
routing:
  retries: 99
  retry: 2
  timeouts:
    read_ms: 5
models:
  - id: beta-5
    deployments: []
    fallbacks: [beta-9]
  - id: new-model
    owned_by: nobody
`;

/** Every field name mistyped, one at each level of the file. */
const TYPOS = `routng:
  retries: 2
vendors:
  beta:
    base_urll: https://example.com
models:
  - id: beta-5
    owned_by: beta
    input_per_mtokk: 3
    deployments:
      - vendor: beta
        wieght: 2
routing:
  breaker:
    failurs: 3
mcp_servers:
  - name: fs
    url: http://localhost:1
    timout_ms: 5
zzz: 1
`;

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

function withFile(text: string, name: string, fn: (file: string) => Promise<void> | void) {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-config-"));
  const file = join(dir, name);
  writeFileSync(file, text);
  return Promise.resolve(fn(file)).finally(() => rmSync(dir, { recursive: true, force: true }));
}

describe("config file mistakes", () => {
  test("every mistake of the file and the environment, one line each with file, path and rule", () =>
    withFile(MISTAKES, "turnpike.yaml", (file) => {
      let error: unknown;
      try {
        loadConfig({ TURNPIKE_CONFIG: file, TURNPIKE_MAX_BODY_MB: "lots" });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      // A YAML file's mistakes carry the line and column of what they name (a missing field: its row's).
      expect((error as ConfigError).problems).toEqual([
        `${file}:3:5: vendors.acme.protocol: must be one of messages, chat, generate, responses, got "soap"`,
        `${file}:5:5: vendors.beta.auth: must be one of x-api-key, bearer, x-goog-api-key, got "token"`,
        `${file}:16:5: models[1].owned_by: must be one of alpha, beta, gamma, delta, got "nobody"`,
        `${file}:15:5: models[1].input_per_mtok: required non-negative number, got nothing`,
        `${file}:15:5: models[1].output_per_mtok: required non-negative number, got nothing`,
        `${file}:15:5: models[1].context_window: required non-negative number, got nothing`,
        `${file}:13:5: models[0].deployments: must be a non-empty list of {vendor, weight, upstream_model, rpm, tpm, continuation}, got an array of 0 items`,
        `${file}:14:17: models[0].fallbacks[0]: must be a catalog model id, got "beta-9"`,
        `${file}:7:3: routing.retries: must be a whole number from 0 to 10, got 99`,
        `${file}:10:5: routing.timeouts.read_ms: unknown field \`read_ms\` (known: connect_ms, first_byte_ms, idle_ms)`,
        `${file}:8:3: routing.retry: unknown field \`retry\` — did you mean \`retries\`?`,
        "TURNPIKE_MAX_BODY_MB must be a number of megabytes above 0 and at most 4096, got lots",
      ]);
    }));

  test("an unknown field anywhere is refused with the name it was likely meant to be", () =>
    withFile(TYPOS, "turnpike.yaml", (file) => {
      expect(problemsOf({ TURNPIKE_CONFIG: file })).toEqual([
        `${file}:1:1: routng: unknown field \`routng\` — did you mean \`routing\`?`,
        `${file}:20:1: zzz: unknown field \`zzz\` (known: models, vendors, routing, mcp_servers, mcp_limits, sign_on, responses_websocket, guardrails)`,
        `${file}:5:5: vendors.beta.base_urll: unknown field \`base_urll\` — did you mean \`base_url\`?`,
        `${file}:9:5: models[0].input_per_mtokk: unknown field \`input_per_mtokk\` — did you mean \`input_per_mtok\`?`,
        `${file}:12:9: models[0].deployments[0].wieght: unknown field \`wieght\` — did you mean \`weight\`?`,
        `${file}:15:5: routing.breaker.failurs: unknown field \`failurs\` — did you mean \`failures\`?`,
        `${file}:19:5: mcp_servers[0].timout_ms: unknown field \`timout_ms\` — did you mean \`timeout_ms\`?`,
      ]);
    }));

  test("the same typos in a JSON file: the same lines, without positions", () =>
    withFile(JSON.stringify({ routng: {}, vendors: { beta: { base_urll: "https://x" } } }), "turnpike.json", (file) => {
      expect(problemsOf({ TURNPIKE_CONFIG: file })).toEqual([
        `${file}: routng: unknown field \`routng\` — did you mean \`routing\`?`,
        `${file}: vendors.beta.base_urll: unknown field \`base_urll\` — did you mean \`base_url\`?`,
      ]);
    }));

  test("YAML that does not parse: each mistake with its line and column", () =>
    withFile("models:\n  - id: x\n    a: b: c\nrouting:\n  retries: 1\n  retries: 2\n", "turnpike.yaml", (file) => {
      expect(problemsOf({ TURNPIKE_CONFIG: file })).toEqual([
        `${file}:3:8: not valid YAML: Nested mappings are not allowed in compact mappings`,
        `${file}:6:3: not valid YAML: Map keys must be unique`,
      ]);
    }));

  test("a file that does not parse names the file and the parser's reason", () =>
    withFile('{"models": [', "turnpike.json", (file) => {
      expect(() => loadConfig({ TURNPIKE_CONFIG: file })).toThrow(`${file}: not valid JSON:`);
    }));

  test("start-up prints the mistakes and exits 1, without a stack trace", () =>
    withFile(MISTAKES, "turnpike.yaml", async (file) => {
      const proc = Bun.spawn(["bun", join(import.meta.dir, "../../src/main.ts")], {
        env: {
          ...process.env,
          TURNPIKE_CONFIG: file,
          PORT: "0",
          TURNPIKE_DB: join(tmpdir(), `turnpike-config-${process.pid}.db`),
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect(code).toBe(1);
      expect(err).toContain("Turnpike cannot start: 11 mistakes in the configuration:");
      expect(err).toContain(`${file}:7:3: routing.retries: must be a whole number from 0 to 10, got 99`);
      expect(err).not.toMatch(/^\s+at /m);
    }));
});
