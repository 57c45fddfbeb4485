import { describe, expect, test } from "bun:test";
import type { GatewayDeps } from "../wiring/deps";
import { EmbeddedBackends, ProbedBackends } from "../storage/backends";
import { healthModule } from "../../test/support/modules";
import gatewayPackage from "../../package.json" with { type: "json" };

/** Only `backends` is read by these routes. */
const depsWith = (backends: GatewayDeps["backends"]) => ({ backends }) as GatewayDeps; // the health module reads nothing else

const get = async (app: ReturnType<typeof healthModule>, path: string) => {
  const r = await app.handle(new Request(`http://localhost${path}`));
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe("GET /health and GET /ready", () => {
  test("embedded: up and ready; draining turns /ready to 503 while /health stays up", async () => {
    const backends = new EmbeddedBackends();
    const app = healthModule(depsWith(backends));
    expect(await get(app, "/health")).toEqual({ status: 200, body: { status: "ok", version: gatewayPackage.version } });
    const ready = await get(app, "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: "ready",
      store: { kind: "sqlite", reachable: true },
      limits: { kind: "memory", reachable: true },
    });
    backends.drain();
    expect(await get(app, "/ready")).toMatchObject({ status: 503, body: { status: "not_ready", draining: true } });
    expect((await get(app, "/health")).status).toBe(200);
  });

  test("scaled out: each unreachable back end is named, with the journal's backlog", async () => {
    let storeUp = true;
    let redisUp = true;
    const backends = new ProbedBackends("summary", {
      store: { kind: "postgres", reachable: async () => storeUp },
      limits: { kind: "redis", reachable: () => redisUp, failMode: "closed" },
      journal: () => 7,
    });
    const app = healthModule(depsWith(backends));
    expect((await get(app, "/ready")).status).toBe(200);
    storeUp = false;
    expect(await get(app, "/ready")).toMatchObject({
      status: 503,
      body: { store: { kind: "postgres", reachable: false }, limits: { reachable: true }, journal: { waiting: 7 } },
    });
    storeUp = true;
    redisUp = false;
    expect(await get(app, "/ready")).toMatchObject({
      status: 503,
      body: { store: { reachable: true }, limits: { kind: "redis", reachable: false, fail_mode: "closed" } },
    });
  });
});
