/**
 * The Grafana dashboard and the Prometheus alert rules shipped in deploy/monitoring read only
 * what the gateway really exports: every metric name and label name of their queries is found in
 * a live gateway's `/metrics` after traffic that makes each metric appear. Where Prometheus is
 * installed (scripts/debian-tools.ts), a real server scrapes the gateway and runs every dashboard
 * query, each of which must parse and evaluate. (`promtool check rules` and `promtool test rules`
 * are run in deploy/test/monitoring.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";
import { parsePrometheus, type Sample } from "./prom-text";

const MONITORING = join(import.meta.dir, "../../../../deploy/monitoring");
const PROMETHEUS = Bun.which("prometheus");

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; refId: string }[];
}
const dashboard = JSON.parse(readFileSync(join(MONITORING, "turnpike.dashboard.json"), "utf8")) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
};
const rules = (
  Bun.YAML.parse(readFileSync(join(MONITORING, "turnpike.rules.yml"), "utf8")) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  }
).groups.flatMap((g) => g.rules);
const dashboardExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset",
]);
/** Labels Prometheus adds to every scraped series (and `le`, a histogram bucket's). */
const ADDED_LABELS = new Set(["job", "instance", "le"]);

/**
 * The metric names and the label names of a PromQL expression: strings, ranges and grouping
 * clauses read apart; what is left that is neither a function (followed by `(`), a keyword nor
 * a number is a metric name.
 */
function namesOf(expr: string): { metrics: string[]; labels: string[] } {
  const labels: string[] = [];
  let rest = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\[[^\]]*\]/g, " ");
  rest = rest.replace(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g, (_, list: string) => {
    labels.push(
      ...list
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean),
    );
    return " ";
  });
  rest = rest.replace(/\{([^}]*)\}/g, (_, matchers: string) => {
    for (const m of matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.push(m[1]!);
    return " ";
  });
  const metrics: string[] = [];
  for (const m of rest.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1]!) || /^\d/.test(m[1]!) || /^[eE]\d/.test(m[1]!)) continue;
    metrics.push(m[1]!);
  }
  return { metrics, labels };
}

let h: Harness;
let exported: Sample[];

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  h = await startHarness();
  const admin = async (path: string, body: unknown) =>
    (await (
      await fetch(h.url + path, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as { id: string; key: string };
  const chat = (key: string, content: string, stream = false) =>
    fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "beta-5.5", stream, messages: [{ role: "user", content }] }),
    }).then(async (r) => (await r.text(), r.status));
  // Traffic that makes every metric appear: a budget on a key and on a team, costs, a stream
  // (first token, pace), a rate limit, an upstream failure.
  const team = await admin("/admin/teams", { name: "watched", budget_usd: 100 });
  const budgeted = await admin("/admin/keys", { name: "budgeted", team_id: team.id, budget_usd: 10 });
  const limited = await admin("/admin/keys", { name: "one a minute", rpm: 1 });
  expect(await chat(budgeted.key, "hi")).toBe(200);
  expect(await chat(h.key, "a stream [sim chunks=4]", true)).toBe(200);
  expect(await chat(h.key, "fail [sim error=500]")).toBe(500);
  expect(await chat(limited.key, "hi")).toBe(200);
  expect(await chat(limited.key, "hi")).toBe(429);
  exported = parsePrometheus(await (await fetch(`${h.url}/metrics`)).text());
});
afterAll(() => h.close());

describe("deploy/monitoring", () => {
  test("the dashboard: unique panel ids, every panel on the Prometheus data source, inside the 24-column grid", () => {
    expect(dashboard.uid).toBe("turnpike-gateway");
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "job"]);
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      if (p.type === "row") continue;
      expect(p.datasource?.uid).toBe("${datasource}");
      expect(p.targets?.length).toBeGreaterThan(0);
    }
    expect(dashboardExprs.length).toBeGreaterThan(15);
  });

  test("the name reader finds metrics and labels, and not functions, keywords or strings", () => {
    expect(
      namesOf(
        'histogram_quantile(0.95, sum by (le, gen_ai_request_model) (rate(x_bucket{job=~"$job",error_type=""}[5m]))) > 1e3 and on (a) y',
      ),
    ).toEqual({ metrics: ["x_bucket", "y"], labels: ["le", "gen_ai_request_model", "a", "job", "error_type"] });
  });

  for (const [what, exprs] of [
    ["the dashboard's queries", dashboardExprs],
    ["the alert rules", rules.map((r) => r.expr)],
  ] as const) {
    test(`${what} use only metric and label names the gateway exports`, () => {
      const names = new Set(exported.map((s) => s.name));
      const labels = new Set(exported.flatMap((s) => Object.keys(s.labels)));
      const used = exprs.map(namesOf);
      const metrics = [...new Set(used.flatMap((u) => u.metrics))];
      expect(metrics.length).toBeGreaterThan(5);
      expect(metrics.filter((m) => !names.has(m))).toEqual([]);
      const labelNames = [...new Set(used.flatMap((u) => u.labels))].filter((l) => !ADDED_LABELS.has(l));
      expect(labelNames.filter((l) => !labels.has(l))).toEqual([]);
    });
  }

  test.skipIf(!PROMETHEUS)(
    "a Prometheus server scraping the gateway runs every dashboard query and every rule",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "turnpike-monitoring-"));
      const port = await freePort();
      writeFileSync(
        join(dir, "prometheus.yml"),
        `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: turnpike\n    static_configs:\n      - targets: ["${new URL(h.url).host}"]\n`,
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
      const query = async (q: string) => {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(
          () => undefined,
        );
        return res
          ? ((await res.json()) as { status: string; error?: string; data?: { result: unknown[] } })
          : undefined;
      };
      try {
        // Until the first scrape has landed, bounded.
        const deadline = Date.now() + 60_000;
        while (
          Date.now() < deadline &&
          !(await query('turnpike_budget_limit_usd{job="turnpike"}'))?.data?.result.length
        )
          await Bun.sleep(250);
        // Grafana's variables as it would fill them in.
        const fill = (e: string) =>
          e.replaceAll("$job", "turnpike").replaceAll("$__rate_interval", "1m").replaceAll("$__range", "1h");
        for (const e of [...dashboardExprs.map(fill), ...rules.map((r) => r.expr)]) {
          const r = await query(e);
          expect({ e, status: r?.status, error: r?.error }).toEqual({ e, status: "success", error: undefined });
        }
        // The budgets panel draws both budgets set above, at their share spent.
        const budgets = (await query(fill(dashboardExprs.find((e) => e.includes("turnpike_budget_spent_usd"))!)))?.data
          ?.result as { metric: Record<string, string>; value: [number, string] }[];
        expect(budgets.map((b) => b.metric.turnpike_budget_scope).sort()).toEqual(["key", "team"]);
        for (const b of budgets) expect(Number(b.value[1])).toBeGreaterThan(0);
      } finally {
        server.kill();
        await server.exited;
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
