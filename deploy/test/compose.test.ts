/**
 * The compose file at the root: its ports bound to the loopback interface unless the operator
 * says otherwise, and `docker compose stop` waiting longer than the gateway drains.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

interface ComposeService {
  ports?: string[];
  stop_grace_period?: string;
  environment?: Record<string, string | number>;
}

const compose = parse(readFileSync(join(import.meta.dir, "../../compose.yaml"), "utf8"), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith("gateway"));

/** Compose's duration syntax as far as this file uses it (`45s`, `1m30s`). */
function seconds(d: string): number {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(d);
  if (!m || d === "") throw new Error(`not a duration: ${d}`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
}

test("two gateways, each port published on 127.0.0.1 by default", () => {
  expect(gateways.length).toBe(2);
  for (const [, g] of gateways) {
    expect(g.ports?.length).toBe(1);
    // `${TURNPIKE_BIND:-127.0.0.1}:8081:8080`, as compose interpolates it with TURNPIKE_BIND unset.
    const port = (g.ports?.[0] ?? "").replace(/\$\{TURNPIKE_BIND:-([^}]+)\}/, "$1");
    expect(port).toMatch(/^127\.0\.0\.1:\d+:8080$/);
  }
  // The databases publish nothing at all.
  for (const name of ["postgres", "redis"]) expect(compose.services[name]?.ports).toBeUndefined();
});

test("docker compose stop waits longer than the drain", () => {
  for (const [, g] of gateways) {
    const drain = Number(g.environment?.TURNPIKE_DRAIN_SECONDS);
    expect(drain).toBe(30);
    expect(seconds(g.stop_grace_period ?? "10s")).toBeGreaterThan(drain);
  }
});
