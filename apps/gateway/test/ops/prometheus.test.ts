/**
 * `/metrics` read by Prometheus's own tools, where they are installed (Debian's `prometheus`
 * package, installed by scripts/debian-tools.ts when it can be; each test is skipped by name otherwise): `promtool check metrics` lints the
 * exposition (names, units, help, histogram shape), and a real Prometheus server scrapes the
 * gateway and answers a query by the conventions' label names.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHarness, type Harness } from "../harness";

const PROMTOOL = Bun.which("promtool");
const PROMETHEUS = Bun.which("prometheus");
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  const res = await h.call("/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify({ model: "beta-5.5", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
});
afterAll(() => h.close());

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port; // a TCP server's address is an object
      s.close(() => resolve(port));
    });
  });
}

describe("Prometheus", () => {
  test.skipIf(!PROMTOOL)("promtool check metrics finds no problem in the exposition", async () => {
    const text = await (await fetch(`${h.url}/metrics`)).text();
    const p = Bun.spawnSync([PROMTOOL ?? "promtool", "check", "metrics"], {
      stdin: new TextEncoder().encode(text),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(p.stdout.toString() + p.stderr.toString()).toBe("");
    expect(p.exitCode).toBe(0);
  });

  test.skipIf(!PROMETHEUS)(
    "a Prometheus server scrapes the gateway and answers by the conventions' labels",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "turnpike-prometheus-"));
      const port = await freePort();
      const target = new URL(h.url).host;
      writeFileSync(
        join(dir, "prometheus.yml"),
        `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: turnpike\n    static_configs:\n      - targets: ["${target}"]\n`,
      );
      const server = Bun.spawn(
        [
          PROMETHEUS ?? "prometheus",
          `--config.file=${join(dir, "prometheus.yml")}`,
          `--storage.tsdb.path=${join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdout: "ignore", stderr: "ignore" },
      );
      try {
        const query = encodeURIComponent(
          'sum by (gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model) (gen_ai_server_request_duration_seconds_count{job="turnpike"})',
        );
        let result: { metric: Record<string, string>; value: [number, string] }[] = [];
        // Until the first scrape has landed, bounded.
        const deadline = Date.now() + 60_000;
        while (result.length === 0 && Date.now() < deadline) {
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${query}`).catch(() => undefined);
          if (res?.ok) result = ((await res.json()) as { data: { result: typeof result } }).data.result;
          if (result.length === 0) await Bun.sleep(250);
        }
        expect(result.map((r) => [r.metric, r.value[1]])).toEqual([
          [{ gen_ai_operation_name: "chat", gen_ai_provider_name: "beta", gen_ai_request_model: "beta-5.5" }, "1"],
        ]);
      } finally {
        server.kill();
        await server.exited;
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
