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
      expect((error as ConfigError).problems).toEqual([
        `${file}: vendors.acme.protocol: must be one of messages, chat, generate, responses, got "soap"`,
        `${file}: vendors.beta.auth: must be one of x-api-key, bearer, x-goog-api-key, got "token"`,
        `${file}: models[1].owned_by: must be one of alpha, beta, gamma, delta, got "nobody"`,
        `${file}: models[1].input_per_mtok: required non-negative number, got nothing`,
        `${file}: models[1].output_per_mtok: required non-negative number, got nothing`,
        `${file}: models[1].context_window: required non-negative number, got nothing`,
        `${file}: models[0].deployments: must be a non-empty list of {vendor, weight, upstream_model, rpm, tpm}, got an array of 0 items`,
        `${file}: models[0].fallbacks[0]: must be a catalog model id, got "beta-9"`,
        `${file}: routing.retries: must be a whole number from 0 to 10, got 99`,
        `${file}: routing.timeouts.read_ms: unknown field (known: connect_ms, first_byte_ms, idle_ms)`,
        `${file}: routing.retry: unknown field (known: retries, retry_after_max_s, timeouts, breaker)`,
        "TURNPIKE_MAX_BODY_MB must be a number of megabytes above 0 and at most 4096, got lots",
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
      expect(err).toContain(`${file}: routing.retries: must be a whole number from 0 to 10, got 99`);
      expect(err).not.toMatch(/^\s+at /m);
    }));
});
