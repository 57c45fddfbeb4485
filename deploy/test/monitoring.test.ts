/**
 * The Prometheus alert rules in deploy/monitoring, read by Prometheus's own tool where it is
 * installed (Debian's `prometheus` package, installed by scripts/debian-tools.ts when it can be;
 * skipped by name otherwise): `promtool check rules` finds them valid, and `promtool test rules`
 * runs their cases (turnpike.rules.test.yml), each alert firing on the series that should fire it
 * and silent on healthy ones. That their metric names are the gateway's own is checked against a
 * live gateway in apps/gateway/test/ops/monitoring.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

const DIR = join(import.meta.dir, "../monitoring");
const PROMTOOL = Bun.which("promtool");

const promtool = (...args: string[]) => {
  const p = Bun.spawnSync([PROMTOOL ?? "promtool", ...args], { cwd: DIR, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString() + p.stderr.toString() };
};

const ALERTS = [
  "TurnpikeBudgetNearlySpent",
  "TurnpikeErrorRateHigh",
  "TurnpikeBreakerOpen",
  "TurnpikeLedgerBacklog",
  "TurnpikeUpstreamSlow",
  "TurnpikeUpstreamLatencyHigh",
];

describe("deploy/monitoring alert rules", () => {
  const rules = (
    parse(readFileSync(join(DIR, "turnpike.rules.yml"), "utf8")) as {
      groups: { rules: { alert: string; labels: { severity: string }; annotations: { summary: string } }[] }[];
    }
  ).groups.flatMap((g) => g.rules);
  const cases = parse(readFileSync(join(DIR, "turnpike.rules.test.yml"), "utf8")) as {
    tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
  };

  test("one alert each for budgets, errors, breakers, the ledger and upstream latency, each with a severity and a summary", () => {
    expect(rules.map((r) => r.alert)).toEqual(ALERTS);
    for (const r of rules) {
      expect(["warning", "critical"]).toContain(r.labels.severity);
      expect(r.annotations.summary.length).toBeGreaterThan(10);
    }
  });

  test("every alert has a case where it fires", () => {
    const fired = new Set(
      cases.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    expect([...fired].sort()).toEqual([...ALERTS].sort());
  });

  test.skipIf(!PROMTOOL)("promtool check rules finds them valid", () => {
    const r = promtool("check", "rules", "turnpike.rules.yml");
    expect(r.out).toContain(`SUCCESS: ${ALERTS.length} rules found`);
    expect(r.code).toBe(0);
  });

  test.skipIf(!PROMTOOL)("promtool test rules passes every case", () => {
    const r = promtool("test", "rules", "turnpike.rules.test.yml");
    expect(r.out).toContain("SUCCESS");
    expect(r.code).toBe(0);
  });
});
