import { batchStoreOf } from "./storage/batch-store";
import { BatchWorker } from "./batches/batch-worker";
import { countTextTokens, countTokens } from "@turnpike/providers";
import { startSimulator, type Simulator } from "@turnpike/simulator";
import { randomBytes } from "node:crypto";
import type { DestinationStream } from "pino";
import { createApp } from "./app";
import type { Config } from "./config/config";
import type { GatewayDeps } from "./wiring/deps";
import { KeyService } from "./keys/key-service";
import { MemoryMcpSessions, RedisMcpSessions } from "./tools/session-store";
import type { PipelineHooks } from "./request/events";
import { buildCatalog } from "./dispatch/catalog";
import { buildRouter } from "./dispatch/deployments";
import { buildUpstreams, vendorsNeedingSimulator } from "./dispatch/upstreams";
import { openBackends } from "./wiring/open-backends";
import type { Store } from "./storage/store";
import { pinoLogger, type Logger } from "./log/logger";
import { GatewayMetrics } from "./telemetry/metrics";
import { requestLog } from "./telemetry/request-log";
import { RefusalLog } from "./telemetry/refused-requests";
import { RequestTrail } from "./telemetry/request-trail";
import { startTracing } from "./telemetry/tracing";
import { DEFAULT_TEAM_ID, teamStoreOf } from "./teams/team-store";
import { teamSpendId } from "./storage/spend-ids";
import { loopTurn } from "./vocabulary/loop-turns";
import { VERSION } from "./vocabulary/version";

export interface Gateway {
  app: ReturnType<typeof createApp>;
  deps: GatewayDeps;
  simulator: Simulator | undefined;
  /** The vendors served by the simulator (no key set). */
  simulated: string[];
  /** The key made on a first start with an empty store (its secret is shown only here). */
  firstKey: { id: string; secret: string } | undefined;
  /** Admin key generated because `TURNPIKE_ADMIN_KEY` was unset. */
  generatedAdminKey: string | undefined;
  /**
   * Graceful stop: `/ready` 503 and no new connections; requests in flight finish, streams for up
   * to `graceMs`, then end with the in-band error (metered); the ledger is flushed; all closed.
   */
  drain(graceMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface BootOptions {
  store?: Store;
  fetch?: typeof fetch;
  /** The clock of rate limits, budgets and key expiry (tests inject one). */
  now?: () => number;
  /** Keep the last upstream requests on `simulator.requests` (tests). */
  captureUpstream?: boolean;
  /** Make a first key when the store has none (default true). */
  firstKey?: boolean;
  logger?: Logger;
  /** Where the JSON log lines go (tests read them); standard output by default. */
  logDestination?: DestinationStream;
  /** Subscribers to the pipeline's lifecycle events. */
  hooks?: PipelineHooks[];
}

/**
 * Builds every dependency from the config and returns the app, not yet listening. The one place
 * that chooses the implementations behind the state seams (wiring/open-backends.ts).
 */
export async function bootGateway(config: Config, opts: BootOptions = {}): Promise<Gateway> {
  const catalog = buildCatalog(config.models, config.vendors);
  const now = opts.now ?? Date.now;
  const adminKey = config.adminKey ?? "sk-admin-" + randomBytes(24).toString("base64url");
  const generatedAdminKey = config.adminKey ? undefined : adminKey;
  // Every secret the gateway holds is blanked out of any line that would carry it.
  const secrets = [
    adminKey,
    config.adminKeyPrevious?.key,
    config.ops.metricsKey,
    ...config.vendors.map((v) => v.apiKey),
  ];
  const logger =
    opts.logger ??
    pinoLogger({ level: config.ops.logLevel, format: config.ops.logFormat, secrets, destination: opts.logDestination });
  // The first line of every start says which release is starting (an upgrade is read from it).
  logger.info(`Turnpike ${VERSION} starting`, { version: VERSION });
  const previous = config.adminKeyPrevious;
  if (previous && Date.parse(previous.until) > now())
    logger.info(`Admin key rotation: the previous admin key is accepted until ${previous.until}.`, {
      admin_key_previous_until: previous.until,
    });
  else if (previous)
    logger.warn(
      `Admin key rotation: the previous admin key's grace ended at ${previous.until}; it is refused (unset TURNPIKE_ADMIN_KEY_PREVIOUS).`,
      { admin_key_previous_until: previous.until },
    );
  // SQLite and in-process counters, or PostgreSQL and Redis (site/operations/scale-out.md "Running several instances").
  const state = await openBackends(config, { store: opts.store, now, logger });
  const { store, spend, ledger } = state;
  const keys = new KeyService(state.directory, now);
  const simulated = vendorsNeedingSimulator(config.vendors);
  // Capturing what the gateway sent upstream costs a parse per request: tests only.
  const simulator = simulated.length
    ? await startSimulator({ port: 0, hostname: "127.0.0.1", captureLimit: opts.captureUpstream ? 100 : 0 })
    : undefined;
  const upstreams = buildUpstreams(config.vendors, simulator?.url);
  const router = buildRouter(catalog, upstreams, config.models, config.routing, config.configFile ?? "config");
  let firstKey: Gateway["firstKey"];
  // Under a cluster-wide lock: instances starting together on an empty store make one key, not one each.
  await state.exclusive(async () => {
    if ((opts.firstKey ?? true) && (await keys.list()).length === 0) {
      const { record, secret } = await keys.create({ name: "first key", team_id: DEFAULT_TEAM_ID });
      firstKey = { id: record.id, secret };
    }
  });
  // Each key's team, for the cost counter: kept up to date by the directory's change events.
  const teams = new Map<string, string>();
  for (const k of await keys.list()) teams.set(k.id, k.team_id ?? "");
  state.directory.onChange((id) => {
    void state.directory.byId(id).then((k) => k && teams.set(id, k.team_id ?? ""));
  });
  const metrics = new GatewayMetrics({
    ledgerPending: () => ledger.size,
    ledgerSetAside: () => ledger.setAside ?? 0,
    processMetrics: true,
    teamOf: (id) => teams.get(id),
    budgets: async () => {
      const owned = (await keys.list()).filter((k) => k.budget_usd !== null && !k.revoked_at);
      const teamed = (await teamStoreOf(store).listTeams()).filter((t) => t.budget_usd !== null);
      return Promise.all([
        ...owned.map(async (k) => ({
          scope: "key" as const,
          keyId: k.id,
          team: k.team_id ?? "",
          limitUsd: k.budget_usd ?? 0,
          spentUsd: await spend.spent(k.id),
        })),
        ...teamed.map(async (t) => ({
          scope: "team" as const,
          keyId: "",
          team: t.id,
          limitUsd: t.budget_usd ?? 0,
          spentUsd: await spend.spent(teamSpendId(t.id)),
        })),
      ]);
    },
  });
  // Each deployment's circuit, read when scraped.
  metrics.watchBreakers(() => router.list(now()));
  const tracing = await startTracing(config.ops);
  // The request log and the metrics read one trail of each request; tracing keeps its own spans.
  const refusals = new RefusalLog(1000, now);
  // Frozen: a hook set's fan-out is compiled once (request/events.ts `fanout`).
  const hooks = Object.freeze([
    new RequestTrail([metrics, requestLog(logger)]),
    refusals,
    ...(tracing ? [tracing.hooks] : []),
    ...(opts.hooks ?? []),
  ]);
  const shutdown = new AbortController();
  const deps: GatewayDeps = {
    config,
    catalog,
    store,
    keys,
    limiter: state.limiter,
    spend,
    authFailures: state.authFailures,
    ledger,
    ...(state.inflight ? { inflight: state.inflight } : {}),
    signatures: state.signatures,
    // MCP sessions in Redis, when there is one, so that any instance serves any session.
    mcpSessions: state.redis ? new RedisMcpSessions(state.redis) : new MemoryMcpSessions(now),
    affinity: state.affinity,
    responses: state.responses,
    upstreams,
    router,
    fetch: opts.fetch ?? fetch,
    now,
    countText: countTextTokens,
    countPrompt: countTokens,
    adminKey,
    logger,
    metrics,
    hooks,
    refusals,
    backends: state.backends,
    shutdown: shutdown.signal,
  };
  // Batch jobs: kept in the store, run by this instance's worker unless TURNPIKE_BATCH_WORKER=off.
  let batchWorker: BatchWorker | undefined;
  deps.batches = { store: batchStoreOf(store), queued: () => batchWorker?.kick() };
  if (config.batches.worker) {
    batchWorker = new BatchWorker(deps, deps.batches.store);
    batchWorker.start();
  }
  const app = createApp(deps);
  // Expired stored responses are purged hourly (and once at start).
  const purge = () => {
    deps.responses
      .purgeExpired(new Date(now()).toISOString())
      .catch((e) => logger.error("purging expired responses failed", {}, e));
    const keptFrom = new Date(now() - config.batches.retentionDays * 86_400_000).toISOString();
    deps.batches?.store.purgeBefore(keptFrom, loopTurn).catch((e) => logger.error("purging old batches failed", {}, e));
    // The ledger's raw rows past their retention, cut at a UTC midnight (the rollups keep whole days).
    const day = 86_400_000;
    const usageFrom = new Date(Math.floor((now() - config.usageRetentionDays * day) / day) * day).toISOString();
    store.pruneUsage(usageFrom, loopTurn).catch((e) => logger.error("pruning old usage rows failed", {}, e));
  };
  purge();
  const purger = setInterval(purge, 3_600_000);
  purger.unref?.();
  const gateway: Gateway = {
    app,
    deps,
    simulator,
    simulated,
    firstKey,
    generatedAdminKey,
    async drain(graceMs) {
      // /ready answers 503 from here on, and no new connection is taken; requests in flight go on.
      state.backends.drain();
      const server = app.server;
      void server?.stop(false);
      const settled = async (until: number) => {
        while ((server?.pendingRequests ?? 0) > 0 && Date.now() < until) await Bun.sleep(25);
      };
      await settled(Date.now() + graceMs);
      // Grace is over: open streams end with the in-band error (and are metered), then the ledger is flushed.
      shutdown.abort();
      await settled(Date.now() + 5000);
      await gateway.close();
    },
    async close() {
      clearInterval(purger);
      // The job in hand is given back (its line in flight finishes first), so another instance takes it at once.
      await batchWorker?.stop();
      state.backends.drain();
      await app.stop?.();
      await simulator?.stop();
      await state.close();
      await tracing?.shutdown();
    },
  };
  return gateway;
}
