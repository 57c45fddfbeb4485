import type { BatchStore } from "../storage/batch-store";
import type { MessagesRequest } from "@turnpike/schema";
import type { Config } from "../config/config";
import type { McpSessionStore } from "../tools/session-store";
import type { KeyService } from "../keys/key-service";
import type { InflightBook } from "../limits/inflight";
import type { PipelineHooks } from "../request/events";
import type { Catalog } from "../dispatch/catalog";
import type { Router } from "../dispatch/deployments";
import type { Upstream } from "../vocabulary/target";
import type { AuthFailureStore } from "../keys/auth-failures";
import type { Backends } from "../storage/backends";
import type { Ledger } from "../metering/ledger";
import type { LimiterStore } from "../limits/limiter-store";
import type { ResponseStore } from "../stored-responses/response-store";
import type { SignatureStore } from "../vocabulary/signature-store";
import type { SpendStore } from "../limits/spend-store";
import type { Store } from "../storage/store";
import type { Logger } from "../log/logger";
import type { GatewayMetrics } from "../telemetry/metrics";
import type { AffinityStore } from "../dispatch/affinity";
import type { RefusalLog } from "../telemetry/refused-requests";

/**
 * Everything the app needs, passed in (docs/style.md rule 6): tests build their own. Every piece
 * of shared state is behind an async interface, so moving it out of the process changes the
 * constructor called in boot.ts, not the callers.
 */
export interface GatewayDeps {
  config: Config;
  catalog: Catalog;
  /** Usage queries and aggregates (the admin API); keys and records go through the seams below. */
  store: Store;
  keys: KeyService;
  limiter: LimiterStore;
  spend: SpendStore;
  authFailures: AuthFailureStore;
  ledger: Ledger;
  /** Requests admitted and not yet recorded, where other instances see them (PostgreSQL only). */
  inflight?: InflightBook;
  signatures: SignatureStore;
  /** Which deployment each agent session is on (dispatch/affinity.ts). */
  affinity: AffinityStore;
  /** Stored Responses-format replies (`previous_response_id`, `GET /v1/responses/{id}`). */
  responses: ResponseStore;
  /** Each vendor's upstream, by vendor id. */
  upstreams: ReadonlyMap<string, Upstream>;
  /** Each model's deployments, fallbacks and timeouts, and the choice of a deployment. */
  router: Router;
  fetch: typeof fetch;
  /** The clock of limits, budgets and key expiry (tests inject one). */
  now: () => number;
  /** Tokens in a piece of text (the local tokenizer). */
  countText: (text: string) => number;
  /** Tokens of a whole prompt in the pivot format. */
  countPrompt: (request: MessagesRequest) => number;
  /** Bearer secret of the admin API. */
  adminKey: string;
  logger: Logger;
  /** The Prometheus metrics (`GET /metrics`), fed through `hooks`. */
  metrics: GatewayMetrics;
  /** Subscribers to the pipeline's lifecycle events. */
  hooks: readonly PipelineHooks[];
  /** This instance's last refused requests, for the live log (fed through `hooks`). */
  refusals?: RefusalLog;
  /** Aborted when a drain's grace period is over: the streams still open end with the in-band error. */
  shutdown?: AbortSignal;
  /** Where MCP sessions live (Redis when configured); absent = this process. */
  mcpSessions?: McpSessionStore;
  /** Which back ends this instance runs on and whether they answer (`GET /ready`); absent = embedded. */
  backends?: Backends;
  /** Batch jobs: their store, and the worker told of new work; absent = the store's, no worker here. */
  batches?: BatchQueue;
}

/** Where batch jobs are kept, and a nudge to this instance's worker when one is queued. */
export interface BatchQueue {
  store: BatchStore;
  queued(): void;
}
