import { countTokens, countTextTokens, MemorySignatureStore } from "@turnpike/providers";
import { startSimulator, type Simulator } from "@turnpike/simulator";
import { randomBytes } from "node:crypto";
import { createApp } from "./app";
import type { Config } from "./config";
import type { GatewayDeps } from "./deps";
import { KeyService } from "./keys/key-service";
import { AuthGuard } from "./limits/auth-guard";
import { BudgetTracker } from "./limits/budget-tracker";
import { RateLimiter } from "./limits/rate-limiter";
import { buildCatalog } from "./routing/catalog";
import { SqliteStore } from "./storage/sqlite-store";
import type { Store } from "./storage/store";
import { buildUpstreams, vendorsNeedingSimulator } from "./upstream/build-upstreams";
import { UsageWriter } from "./usage/usage-writer";

export interface Gateway {
  app: ReturnType<typeof createApp>;
  deps: GatewayDeps;
  simulator: Simulator | undefined;
  /** The key made on a first start with an empty store (its secret is shown only here). */
  firstKey: { id: string; secret: string } | undefined;
  /** Admin key generated because `TURNPIKE_ADMIN_KEY` was unset. */
  generatedAdminKey: string | undefined;
  close(): Promise<void>;
}

export interface BootOptions {
  store?: Store;
  fetch?: typeof fetch;
  /** The clock of rate limits (tests inject one). */
  now?: () => number;
  /** Keep the last upstream requests on `simulator.requests` (tests). */
  captureUpstream?: boolean;
  /** Make a first key when the store has none (default true). */
  firstKey?: boolean;
}

/** Builds every dependency from the config and returns the app, not yet listening. */
export async function bootGateway(config: Config, opts: BootOptions = {}): Promise<Gateway> {
  const catalog = buildCatalog(config.models);
  const store = opts.store ?? new SqliteStore(config.dbPath);
  const now = opts.now ?? Date.now;
  const keys = await KeyService.load(store, now);
  const budgets = await BudgetTracker.load(store, now);
  const usage = new UsageWriter(store, {
    onError: (e) => console.error("turnpike: usage commit failed, will retry:", e),
  });
  const needSim = vendorsNeedingSimulator(config);
  // Capturing what the gateway sent upstream costs a parse per request: tests only.
  const simulator = needSim.length ? await startSimulator({ port: 0, hostname: "127.0.0.1", captureLimit: opts.captureUpstream ? 100 : 0 }) : undefined;
  const upstreams = buildUpstreams(config, simulator?.url);
  const adminKey = config.adminKey ?? "sk-admin-" + randomBytes(24).toString("base64url");
  const generatedAdminKey = config.adminKey ? undefined : adminKey;
  let firstKey: Gateway["firstKey"];
  if ((opts.firstKey ?? true) && keys.size === 0) {
    const { record, secret } = await keys.create({ name: "first key" });
    firstKey = { id: record.id, secret };
  }
  const deps: GatewayDeps = {
    config,
    catalog,
    store,
    keys,
    limiter: new RateLimiter(now),
    budgets,
    authGuard: new AuthGuard(30, 60_000, now),
    usage,
    upstreams,
    fetch: opts.fetch ?? fetch,
    countText: countTextTokens,
    countPrompt: countTokens,
    signatures: new MemorySignatureStore(10_000),
    adminKey,
  };
  const app = createApp(deps);
  return {
    app,
    deps,
    simulator,
    firstKey,
    generatedAdminKey,
    async close() {
      await app.stop?.();
      await usage.flush();
      await simulator?.stop();
      await store.close();
    },
  };
}
