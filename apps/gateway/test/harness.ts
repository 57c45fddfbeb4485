import { CATALOG_MODEL_IDS, EMBEDDING_MODEL_IDS } from "@turnpike/schema";
import { bootGateway, type Gateway } from "../src/boot";
import { loadConfig } from "../src/config/config";
import type { PipelineHooks } from "../src/request/events";
import type { Logger } from "../src/log/logger";
import { SqliteStore } from "../src/storage/sqlite-store";

export const ADMIN_KEY = "sk-admin-test-0123456789abcdefghijklmnop";

export interface Harness {
  gw: Gateway;
  url: string;
  key: string;
  keyId: string;
  /** A fetch to the running gateway with the test key set. */
  call(path: string, init?: RequestInit & { dialect?: "messages" | "chat" | "responses" }): Promise<Response>;
  close(): Promise<void>;
}

/** A real gateway on a random loopback port, its vendors served by the simulator, its store in memory. */
export async function startHarness(
  env: Record<string, string> = {},
  opts: { now?: () => number; fetch?: typeof fetch; hooks?: PipelineHooks[]; logger?: Logger } = {},
): Promise<Harness> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_ADMIN_KEY: ADMIN_KEY,
    TURNPIKE_DB: ":memory:",
    TURNPIKE_LOG_LEVEL: "warn",
    // Tests make many admin writes in a minute; the limit's own test sets it low.
    TURNPIKE_ADMIN_WRITES_PER_MINUTE: "100000",
    ...env,
  });
  const gw = await bootGateway(config, {
    store: new SqliteStore(":memory:"),
    firstKey: false,
    captureUpstream: true,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.hooks ? { hooks: opts.hooks } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  // PORT is 0 (any free port) unless a test needs the URL before start (TURNPIKE_PUBLIC_URL).
  gw.app.listen({ port: config.port, hostname: "127.0.0.1" });
  const url = `http://127.0.0.1:${gw.app.server!.port}`;
  const created = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "test" }),
  });
  const { key, id } = (await created.json()) as { key: string; id: string };
  return {
    gw,
    url,
    key,
    keyId: id,
    call(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      if (init.dialect === "messages") {
        if (!headers.has("x-api-key")) headers.set("x-api-key", key);
        headers.set("alpha-version", "2023-06-01");
      } else if (!headers.has("authorization")) headers.set("authorization", `Bearer ${key}`);
      return fetch(url + path, { ...init, headers });
    },
    async close() {
      await gw.close();
    },
  };
}

/** The built-in catalog's ids: the one list, kept in `@turnpike/schema` for the mocks and SDK tests too. */
export const CATALOG_IDS = CATALOG_MODEL_IDS;

/** Every model `GET /v1/models` lists for a client library: the catalog's models and its embedding models. */
export const LISTED_IDS: readonly string[] = [...CATALOG_MODEL_IDS, ...EMBEDDING_MODEL_IDS];

/** One model per vendor word. */
export const ONE_PER_VENDOR = ["alpha-opus-4-8", "beta-5.5", "gamma-3-pro", "delta-m3"] as const;

/** Reads an SSE body into its frames: `{event?, data}` each. */
export async function readSSE(res: Response): Promise<{ event?: string; data: string }[]> {
  const { SSEDecoderStream } = await import("@turnpike/schema/sse");
  const out: { event?: string; data: string }[] = [];
  const reader = res.body!.pipeThrough(new SSEDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out.push(value);
  }
  return out;
}
