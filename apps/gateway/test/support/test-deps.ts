/**
 * Test support: a whole {@link GatewayDeps} built from the real in-process pieces (an in-memory
 * SQLite store, the key directory, the memory limiter, spend, auth-failure and signature stores,
 * the group-commit ledger), with an injected clock, fetch and logger. Not used by the gateway.
 */
import { responseStoreOf } from "../../src/stored-responses/response-store-of";
import { countTextTokens, countTokens } from "@turnpike/providers";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { loadConfig } from "../../src/config/config";
import type { GatewayDeps } from "../../src/wiring/deps";
import { FORMATS, type ClientFormat } from "../../src/formats";
import { KeyService, type NewKey } from "../../src/keys/key-service";
import { buildCatalog } from "../../src/dispatch/catalog";
import { buildRouter } from "../../src/dispatch/deployments";
import { buildUpstreams } from "../../src/dispatch/upstreams";
import type { Upstream } from "../../src/vocabulary/target";
import type { Target } from "../../src/protocols";
import { MemoryAuthFailures } from "../../src/keys/auth-failures";
import { StoreKeyDirectory } from "../../src/keys/key-directory";
import { GroupCommitLedger } from "../../src/metering/ledger";
import { MemoryLimiterStore } from "../../src/limits/limiter-store";
import { MemorySignatures } from "../../src/stored-responses/signature-store";
import { MemorySpendStore } from "../../src/limits/spend-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import type { KeyRecord } from "../../src/storage/store";
import { memoryLogger } from "./memory-logger";
import { GatewayMetrics } from "../../src/telemetry/metrics";
import type { RequestContext } from "../../src/request/context";
import type { PipelineHooks } from "../../src/request/events";
import { MemoryAffinity } from "../../src/dispatch/affinity";

/** Where the simulated upstreams of the test deps point (never reached: fetch is injected). */
export const SIM_URL = "http://sim.invalid";

/** 2026-11-15T12:00:00Z: the test clock's start. */
export const T0 = Date.UTC(2026, 10, 15, 12, 0, 0);

/** One call made through a {@link FakeFetch}. */
export interface FetchCall {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  signal: AbortSignal | undefined;
}

export type FetchHandler = (call: FetchCall) => Response | Promise<Response>;

/** A fetch that answers from `handler` and keeps every call. */
export interface FakeFetch {
  fetch: typeof fetch;
  calls: FetchCall[];
}

export function fakeFetch(handler: FetchHandler): FakeFetch {
  const calls: FetchCall[] = [];
  const fn = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const call: FetchCall = {
      url: input instanceof Request ? input.url : String(input),
      method: init.method ?? "GET",
      headers: new Headers(init.headers),
      body: typeof init.body === "string" ? init.body : "",
      signal: init.signal ?? undefined,
    };
    calls.push(call);
    if (call.signal?.aborted) throw new DOMException("The operation was aborted.", "AbortError");
    return handler(call);
  };
  // `typeof fetch` also carries Bun's `preconnect`; the pipeline never calls it.
  return { fetch: Object.assign(fn, { preconnect: () => {} }) as typeof fetch, calls };
}

/** A JSON response. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export interface TestClock {
  now: () => number;
  advance(ms: number): void;
}

export function testClock(start = T0): TestClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export interface TestDeps {
  deps: GatewayDeps;
  clock: TestClock;
  logger: ReturnType<typeof memoryLogger>;
  store: SqliteStore;
  fetch: FakeFetch;
  /** A key made through the key service (its secret is returned once). */
  addKey(fields?: Partial<NewKey>): Promise<{ record: KeyRecord; secret: string }>;
  close(): Promise<void>;
}

export interface TestDepsOptions {
  fetch?: FetchHandler;
  hooks?: PipelineHooks[];
  /** Failed authentications from one address before it is locked out. */
  maxAuthFailures?: number;
}

/** Deps whose every upstream is a simulated vendor at {@link SIM_URL}, reached through a fake fetch. */
export async function testDeps(opts: TestDepsOptions = {}): Promise<TestDeps> {
  const config = loadConfig({});
  const clock = testClock();
  const logger = memoryLogger();
  const store = new SqliteStore(":memory:");
  const keys = new KeyService(await StoreKeyDirectory.load(store), clock.now);
  const fake = fakeFetch(opts.fetch ?? (() => json({ error: "no fetch handler in this test" }, 500)));
  const ledger = new GroupCommitLedger(store);
  const catalog = buildCatalog([], config.vendors);
  const upstreams = buildUpstreams(config.vendors, SIM_URL);
  const deps: GatewayDeps = {
    config,
    catalog,
    store,
    keys,
    limiter: new MemoryLimiterStore(clock.now),
    spend: await MemorySpendStore.load(store, clock.now),
    authFailures: new MemoryAuthFailures(opts.maxAuthFailures ?? 30, 60_000, clock.now),
    ledger,
    signatures: new MemorySignatures(100),
    affinity: new MemoryAffinity(() => Date.now()),
    responses: responseStoreOf(store),
    upstreams,
    router: buildRouter(catalog, upstreams, [], config.routing, "config"),
    fetch: fake.fetch,
    now: clock.now,
    countText: countTextTokens,
    countPrompt: countTokens,
    adminKey: "sk-admin-test-0123456789abcdefghijklmnop",
    logger,
    metrics: new GatewayMetrics({ ledgerPending: () => ledger.size, processMetrics: false }),
    hooks: opts.hooks ?? [],
  };
  return {
    deps,
    clock,
    logger,
    store,
    fetch: fake,
    addKey: (fields = {}) => keys.create({ name: "test", ...fields }),
    async close() {
      await deps.ledger.flush();
      await store.close();
    },
  };
}

/** The built-in catalog entry `model` on a real (not simulated) upstream of its vendor at `baseURL`. */
export function testTarget(model: string, upstream: Partial<Upstream> = {}): Target {
  const config = loadConfig({});
  const entry = buildCatalog([], config.vendors).get(model);
  if (!entry) throw new Error(`no catalog entry ${model}`);
  const vendor = config.vendors.find((v) => v.id === entry.owned_by)!;
  const base = buildUpstreams(
    [{ ...vendor, apiKey: "vendor-key", baseURL: "https://vendor.example/base/" }],
    undefined,
  ).get(vendor.id)!;
  return { entry, upstream: { ...base, ...upstream } };
}

/** A request context with a fixed id and address (no server). */
export function testContext(
  init: { format?: ClientFormat; request?: Request; address?: string; id?: string } = {},
): RequestContext {
  const request = init.request ?? new Request("http://gateway.test/v1/messages", { method: "POST", body: "{}" });
  return {
    id: init.id ?? "req_test0001",
    started: performance.now(),
    request,
    format: init.format ?? FORMATS.messages,
    server: undefined,
    address: () => init.address ?? "10.0.0.1",
  };
}

/** A short pivot stream: one text block, then the end. */
export const PIVOT_EVENTS: readonly MessagesStreamEvent[] = [
  {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "alpha-opus-4-8",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1 },
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } },
  { type: "message_stop" },
];
