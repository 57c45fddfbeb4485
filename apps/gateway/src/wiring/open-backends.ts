import { responseStoreOf } from "../stored-responses/response-store-of";
import type { Config } from "../config/config";
import type { Logger } from "../log/logger";
import { type AuthFailureStore, MemoryAuthFailures } from "../keys/auth-failures";
import { type Backends, ProbedBackends } from "../storage/backends";
import { JournalLedger } from "../metering/journal-ledger";
import { type KeyDirectory, StoreKeyDirectory } from "../keys/key-directory";
import { GroupCommitLedger, type Ledger } from "../metering/ledger";
import { type LimiterStore, MemoryLimiterStore } from "../limits/limiter-store";
import { PostgresStore } from "../storage/postgres-store";
import { RedisAuthFailures } from "../keys/redis-auth-failures";
import { FailoverAuthFailures, FailoverLimiterStore, FailoverSpendStore } from "./redis-failover";
import { RedisKeyNotices } from "../keys/redis-key-notices";
import { RedisLimiterStore } from "../limits/redis-limiter-store";
import { RedisLink } from "../storage/redis-link";
import { RedisSignatures } from "../stored-responses/redis-signatures";
import { RedisSpendStore } from "../limits/redis-spend-store";
import { MemorySignatures } from "../stored-responses/signature-store";
import type { SignatureStore } from "../vocabulary/signature-store";
import { SharedKeyDirectory } from "../keys/shared-key-directory";
import { MemorySpendStore, monthStart, type SpendStore } from "../limits/spend-store";
import { SqliteStore } from "../storage/sqlite-store";
import { JournaledResponseStore } from "../stored-responses/journaled-response-store";
import type { ResponseStore } from "../stored-responses/response-store";
import type { Store, UsageRecord } from "../storage/store";
import { PostgresInflightBook } from "../limits/postgres-inflight";
import { type AffinityStore, MemoryAffinity } from "../dispatch/affinity";
import { RedisAffinity } from "../dispatch/redis-affinity";

/** The state seams of one instance, built from the configuration. */
export interface OpenedBackends {
  store: Store;
  directory: KeyDirectory;
  limiter: LimiterStore;
  spend: SpendStore;
  authFailures: AuthFailureStore;
  ledger: Ledger;
  /** Requests in flight where other instances see them (PostgreSQL only). */
  inflight?: PostgresInflightBook;
  signatures: SignatureStore;
  /** The Redis connection, when configured (for state kept by other concerns, such as MCP sessions). */
  redis: RedisLink | undefined;
  /** Which deployment each agent session is on (shared through Redis when there is one). */
  affinity: AffinityStore;
  /** Stored Responses-format replies: journaled through an outage when the store is PostgreSQL. */
  responses: ResponseStore;
  backends: Backends;
  /** Runs `fn` once at a time across every instance sharing the store, with the keys re-read first. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The advisory lock of start-up work done once per cluster ("tp-first" in ASCII). */
const FIRST_START_LOCK = 0x74702d6669727374n;

/** Where a URL points, without its credentials (for logs). */
function where(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol.startsWith("redis") ? 6379 : 5432)}${u.pathname.length > 1 ? u.pathname : ""}`;
}

/** Opens PostgreSQL, waiting for it at start: an instance cannot serve keys it has never read. */
async function openPostgres(url: string, logger: Logger): Promise<PostgresStore> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await PostgresStore.open(url);
    } catch (e) {
      if (attempt % 10 === 0)
        logger.error(`PostgreSQL at ${where(url)} is unreachable at start; retrying every second`, {}, e);
      await Bun.sleep(1000);
    }
  }
}

/**
 * Picks the implementation behind every state seam (docs/design.md, "State"): SQLite and
 * in-process counters by default; PostgreSQL for records with `TURNPIKE_DATABASE_URL`; Redis for
 * limits, budgets, failed-auth counters and key notices with `TURNPIKE_REDIS_URL`.
 */
export async function openBackends(
  config: Config,
  opts: { store?: Store; now: () => number; logger: Logger },
): Promise<OpenedBackends> {
  const { databaseUrl, redisUrl, redisFail, redisPrefix, journalDir, keyCacheTtlMs, inflightAfterMs } = config.scaleOut;
  const { now, logger } = opts;
  const pg = opts.store ? undefined : databaseUrl ? await openPostgres(databaseUrl, logger) : undefined;
  const store: Store = opts.store ?? pg ?? new SqliteStore(config.dbPath);
  const link = redisUrl ? new RedisLink(redisUrl, redisPrefix) : undefined;
  if (link && !(await link.start())) {
    logger.warn(
      `Redis at ${where(link.url)} is unreachable at start; limits are ${redisFail === "open" ? "per instance" : "refused (503)"} until it answers`,
      {},
    );
  }
  link?.onState((up) =>
    up
      ? logger.info(`Redis at ${where(link.url)} answers; limits are shared`)
      : logger.warn(`Redis at ${where(link.url)} is unreachable; TURNPIKE_REDIS_FAIL=${redisFail}`),
  );

  const shared = pg !== undefined || link !== undefined;
  const directory: KeyDirectory = shared
    ? await SharedKeyDirectory.load(store, {
        ttlMs: keyCacheTtlMs,
        notices: link ? new RedisKeyNotices(link) : undefined,
        onError: (e) => logger.error("reading keys from the store failed; serving the cached keys", {}, e),
      })
    : await StoreKeyDirectory.load(store);

  const localSpend = await MemorySpendStore.load(store, now);
  const localLimiter = new MemoryLimiterStore(now);
  const localAuth = new MemoryAuthFailures(30, 60_000, now);
  let spend: SpendStore = localSpend;
  let limiter: LimiterStore = localLimiter;
  let authFailures: AuthFailureStore = localAuth;
  let redisAuth: RedisAuthFailures | undefined;
  let redisSpend: RedisSpendStore | undefined;
  if (link) {
    redisSpend = new RedisSpendStore(link, store, now);
    if (link.up) await redisSpend.seed().catch((e) => logger.error("seeding the month's spend in Redis failed", {}, e));
    redisAuth = new RedisAuthFailures(link, 30, 60_000);
    // An outage begins: the local counters are raised to the store's totals, so that a budget
    // another instance spent stays refused here too (site/operations/scale-out.md "Running several instances").
    spend = new FailoverSpendStore(
      link,
      redisFail,
      redisSpend,
      localSpend,
      () => store.spendSince(monthStart(now())),
      (e) => logger.error("reading the month's spend from the store failed", {}, e),
    );
    limiter = new FailoverLimiterStore(link, redisFail, new RedisLimiterStore(link, now), localLimiter);
    authFailures = new FailoverAuthFailures(link, redisFail, redisAuth, localAuth);
  }

  // Each request in flight written where the other instances see it, so a dead instance's are billed.
  const inflight = pg
    ? new PostgresInflightBook(pg.sql, {
        afterMs: inflightAfterMs,
        onError: (what, e) => logger.error(`${what} in PostgreSQL failed`, {}, e),
        onReaped: (rows) => {
          logger.warn(`billed ${rows.length} requests of an instance that stopped answering (aborted, estimated)`, {
            request_ids: rows
              .slice(0, 20)
              .map((r) => r.request_id)
              .join(","),
          });
          for (const r of rows) {
            const done = r.budgets.length
              ? spend.settle(r.budgets, r.reserved_usd, r.cost_usd, true)
              : spend.add(r.key_id, r.cost_usd);
            done.catch((e) => logger.error("spend update failed", { request_id: r.request_id }, e));
          }
        },
      })
    : undefined;
  if (inflight)
    await inflight
      .start()
      .catch((e) => logger.error("the first heartbeat in PostgreSQL failed; retrying in the background", {}, e));
  const journal = pg
    ? JournalLedger.open(journalDir, store, {
        ...(inflight ? { beforeShip: () => inflight.idle() } : {}),
        // Strict mode (TURNPIKE_INFLIGHT_AFTER_MS=0): no client hears "done" before its request's row is written.
        ...(inflight?.strict ? { companion: (r: UsageRecord) => inflight.written(r.request_id) } : {}),
        onError: (e) => logger.error("shipping usage records to PostgreSQL failed; they wait in the journal", {}, e),
        onStoreState: (up) => up && logger.info("PostgreSQL answers again; the journal is being shipped"),
        onSetAside: (r, e) =>
          logger.error(
            `PostgreSQL refused a usage record for its values; it is set aside in ${journalDir}/set-aside.jsonl and the records behind it are shipped`,
            { request_id: r.request_id, key_id: r.key_id },
            e,
          ),
      })
    : undefined;
  if (journal && journal.backlog > 0)
    logger.warn(
      `usage journal ${journalDir}: ${journal.backlog} records from before this start are being shipped to PostgreSQL`,
    );
  const responses = pg
    ? JournaledResponseStore.open(journalDir, responseStoreOf(store), {
        onState: (up, waiting) =>
          up
            ? logger.info("stored responses journaled during a PostgreSQL outage have all been shipped")
            : logger.warn(
                `PostgreSQL is unreachable: stored responses are journaled in ${journalDir} (${waiting} waiting) and shipped when it answers`,
              ),
        onDropped: (id, e) =>
          logger.error("PostgreSQL refused a journaled stored response; it is dropped", { response_id: id }, e),
        onError: (e) => logger.error("shipping journaled stored responses stopped", {}, e),
      })
    : undefined;
  const ledger: Ledger =
    journal ?? new GroupCommitLedger(store, { onError: (e) => logger.error("usage commit failed, will retry", {}, e) });

  const summary = [
    `Back ends: store ${pg && databaseUrl ? `PostgreSQL at ${where(databaseUrl)} (usage journal ${journalDir})` : "SQLite (embedded)"}`,
    `limits, budgets and key notices ${link ? `in Redis at ${where(link.url)} (TURNPIKE_REDIS_FAIL=${redisFail})` : "in process memory"}.`,
  ].join("; ");
  const backends = new ProbedBackends(summary, {
    store: {
      kind: pg ? "postgres" : "sqlite",
      reachable: async () => {
        if (!pg) return true;
        try {
          await Promise.race([pg.ping(), Bun.sleep(1000).then(() => Promise.reject(new Error("no answer in 1 s")))]);
          return true;
        } catch {
          return false;
        }
      },
    },
    limits: {
      kind: link ? "redis" : "memory",
      reachable: () => link?.up ?? true,
      ...(link ? { failMode: redisFail } : {}),
    },
    ...(journal ? { journal: () => journal.size } : {}),
  });

  return {
    store,
    // Thought signatures follow a conversation from instance to instance through Redis.
    signatures: link ? new RedisSignatures(link) : new MemorySignatures(10_000),
    redis: link,
    // A session's deployment likewise (dispatch/affinity.ts).
    affinity: link ? new RedisAffinity(link, now) : new MemoryAffinity(now),
    responses: responses ?? responseStoreOf(store),
    directory,
    limiter,
    spend,
    authFailures,
    ledger,
    ...(inflight ? { inflight } : {}),
    backends,
    exclusive: (fn) =>
      pg && directory instanceof SharedKeyDirectory
        ? pg.exclusive(FIRST_START_LOCK, async () => {
            await directory.reload();
            return fn();
          })
        : fn(),
    async close() {
      if (directory instanceof SharedKeyDirectory) directory.close();
      redisAuth?.close();
      await redisSpend?.close();
      await responses?.close();
      if (journal) await journal.close();
      else await ledger.flush();
      await inflight?.close();
      link?.close();
      await store.close();
    },
  };
}
