/**
 * Circuit breaking per deployment: after `failures` consecutive failures it is skipped for
 * `cooldown_s`, then one probe decides; GET /admin/deployments shows each state.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness } from "../harness";
import { ask, label, routedGateway, VARIANTS } from "./setup";

let h: Harness;
let clock = Date.now();
beforeAll(async () => {
  h = await routedGateway(
    `
vendors:
  alpha-backup: { protocol: messages }
models:
  - id: alpha-haiku-4-5
    deployments:
      - { vendor: alpha, weight: 1000000 }
      - { vendor: alpha-backup, weight: 1 }
routing:
  breaker: { failures: 2, cooldown_s: 30 }
`,
    { now: () => clock },
  );
});
afterAll(() => h.close());
beforeEach(() => h.gw.simulator!.clearFaults());

interface Row {
  model: string;
  deployment: string;
  state: string;
  consecutive_failures: number;
  failures: number;
  last_error: string | null;
  latency_ms: number;
}
async function deployment(name: string): Promise<Row> {
  const res = await fetch(`${h.url}/admin/deployments`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as { data: Row[] };
  return data.find((d) => d.model === "alpha-haiku-4-5" && d.deployment === name)!;
}
const primaryHits = (from: number) =>
  h.gw.simulator!.requests.slice(from).filter((r) => r.headers["x-api-key"] === "simulator-alpha").length;

describe("the breaker opens, skips, probes and closes", () => {
  for (const v of VARIANTS) {
    test(label(v), async () => {
      clock += 3_600_000; // a fresh hour: whatever an earlier variant left has cooled down
      h.gw.simulator!.fault("simulator-alpha", { status: 500 });
      // Two failures in a row (each request still served by the backup) open the circuit.
      for (let i = 0; i < 2; i++) {
        const a = await ask(h, v, "alpha-haiku-4-5", `Hi [sim text="backup"]`);
        expect(a.status).toBe(200);
        expect(a.res.headers.get("x-turnpike-attempts")).toBe("2");
      }
      const open = await deployment("alpha");
      expect(open.state).toBe("open");
      expect(open.consecutive_failures).toBeGreaterThanOrEqual(2);
      expect(open.last_error).toContain("server");
      expect((await deployment("alpha-backup")).state).toBe("closed");
      // The metrics read the same circuits when scraped.
      const metrics = await (await fetch(`${h.url}/metrics`)).text();
      expect(metrics).toContain(
        'turnpike_deployment_breaker_state{turnpike_deployment="alpha",gen_ai_request_model="alpha-haiku-4-5",turnpike_breaker_state="open"} 1',
      );
      expect(metrics).toContain(
        'turnpike_deployment_breaker_state{turnpike_deployment="alpha-backup",gen_ai_request_model="alpha-haiku-4-5",turnpike_breaker_state="closed"} 1',
      );
      // Open: skipped, the backup serves at the first attempt.
      let from = h.gw.simulator!.requests.length;
      const skipped = await ask(h, v, "alpha-haiku-4-5", "Hi");
      expect(skipped.res.headers.get("x-turnpike-deployment")).toBe("alpha-backup");
      expect(skipped.res.headers.get("x-turnpike-attempts")).toBe("1");
      expect(primaryHits(from)).toBe(0);
      // After the cooldown: half open, and a failed probe opens it again.
      clock += 30_000;
      expect((await deployment("alpha")).state).toBe("half_open");
      from = h.gw.simulator!.requests.length;
      const failedProbe = await ask(h, v, "alpha-haiku-4-5", "Hi");
      expect(failedProbe.status).toBe(200);
      expect(primaryHits(from)).toBe(1);
      expect((await deployment("alpha")).state).toBe("open");
      // The next cooldown's probe succeeds: closed, and the primary serves again.
      clock += 30_000;
      h.gw.simulator!.clearFaults();
      const probe = await ask(h, v, "alpha-haiku-4-5", `Hi [sim text="primary is back"]`);
      expect(probe.text).toBe("primary is back");
      expect(probe.res.headers.get("x-turnpike-deployment")).toBe("alpha");
      const closed = await deployment("alpha");
      expect(closed.state).toBe("closed");
      expect(closed.consecutive_failures).toBe(0);
      expect(closed.latency_ms).toBeGreaterThan(0);
    });
  }
});

test("GET /admin/deployments needs the admin key, and lists every model's deployments", async () => {
  expect((await fetch(`${h.url}/admin/deployments`)).status).toBe(401);
  const res = await fetch(`${h.url}/admin/deployments`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const { data } = (await res.json()) as { data: Row[] };
  expect(data.filter((d) => d.model === "alpha-haiku-4-5").map((d) => d.deployment)).toEqual(["alpha", "alpha-backup"]);
  expect(data.find((d) => d.model === "beta-5.5")).toMatchObject({ deployment: "beta", state: "closed" });
});

test("with every circuit open and nowhere else to go, the model is still asked rather than the client refused", async () => {
  clock += 3_600_000;
  h.gw.simulator!.fault("simulator-gamma", { status: 500 });
  for (let i = 0; i < 3; i++) expect((await ask(h, VARIANTS[0], "gamma-3-flash", "Hi")).status).toBe(500);
  const res = await fetch(`${h.url}/admin/deployments`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const { data } = (await res.json()) as { data: Row[] };
  expect(data.find((d) => d.model === "gamma-3-flash")!.state).toBe("open");
  h.gw.simulator!.clearFaults();
  const a = await ask(h, VARIANTS[2], "gamma-3-flash", `Hi [sim text="still asked"]`);
  expect(a.status).toBe(200);
  expect(a.text).toBe("still asked");
});
