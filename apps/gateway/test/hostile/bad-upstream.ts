import type { Server } from "bun";
import { startHarness, type Harness } from "../harness";

/** One answer of the scripted upstream: status, content type and body (a string, or chunks sent one by one). */
export interface Scripted {
  status?: number;
  type?: string;
  body: string | string[];
}

/** What the scripted upstream saw of one call. */
export interface SeenCall {
  path: string;
  body: Record<string, unknown>;
}

/**
 * A vendor that answers whatever the test scripts, on a real socket: every built-in vendor word
 * (alpha, beta, gamma, delta) of a gateway started with {@link startBadUpstreamGateway} points here.
 */
export interface BadUpstream {
  url: string;
  /** The answer to the next calls (until changed). */
  script(answer: Scripted | ((call: SeenCall) => Scripted)): void;
  calls: SeenCall[];
  stop(): void;
}

export function startBadUpstream(): BadUpstream {
  let answer: Scripted | ((call: SeenCall) => Scripted) = {
    status: 500,
    type: "application/json",
    body: '{"error":"nothing scripted"}',
  };
  const calls: SeenCall[] = [];
  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const text = await req.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>; // the gateway's request body, for the test to read
      } catch {
        // not JSON: kept empty
      }
      const call = { path: new URL(req.url).pathname, body };
      calls.push(call);
      const a = typeof answer === "function" ? answer(call) : answer;
      const headers = a.type ? { "content-type": a.type } : undefined;
      if (typeof a.body === "string") return new Response(a.body, { status: a.status ?? 200, headers });
      const chunks = a.body;
      const enc = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = chunks.shift();
          if (next === undefined) return controller.close();
          await Bun.sleep(1);
          controller.enqueue(enc.encode(next));
        },
      });
      return new Response(stream, { status: a.status ?? 200, headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    script(a) {
      answer = a;
    },
    calls,
    stop: () => void server.stop(true),
  };
}

/** A gateway whose every vendor is the scripted upstream (keys set, so no simulator). */
export async function startBadUpstreamGateway(bad: BadUpstream, env: Record<string, string> = {}): Promise<Harness> {
  return startHarness({
    ALPHA_API_KEY: "k",
    ALPHA_BASE_URL: bad.url,
    BETA_API_KEY: "k",
    BETA_BASE_URL: `${bad.url}/v1`,
    GAMMA_API_KEY: "k",
    GAMMA_BASE_URL: bad.url,
    DELTA_API_KEY: "k",
    DELTA_BASE_URL: `${bad.url}/v1`,
    ...env,
  });
}

/** The ledger's records of one request id (after the group commit). */
export async function recordsOf(h: Harness, requestId: string | null) {
  await h.gw.deps.ledger.flush();
  return (await h.gw.deps.store.queryUsage({ key_id: h.keyId, limit: 100_000 })).filter(
    (r) => r.request_id === requestId,
  );
}

export type ClientFormatName = "messages" | "chat" | "responses";

const CLIENT_CALLS: Record<
  ClientFormatName,
  { path: string; body: (model: string, stream: boolean) => Record<string, unknown> }
> = {
  messages: {
    path: "/v1/messages",
    body: (model, stream) => ({ model, max_tokens: 100, stream, messages: [{ role: "user", content: "Hello there" }] }),
  },
  chat: {
    path: "/v1/chat/completions",
    body: (model, stream) => ({ model, stream, messages: [{ role: "user", content: "Hello there" }] }),
  },
  responses: {
    path: "/v1/responses",
    body: (model, stream) => ({ model, stream, store: false, input: "Hello there" }),
  },
};

/** A request in each client format, JSON or stream, for `model`. */
export function clientCall(
  h: Harness,
  format: ClientFormatName,
  model: string,
  stream: boolean,
  extra: Record<string, unknown> = {},
) {
  const c = CLIENT_CALLS[format];
  return h.call(c.path, {
    method: "POST",
    dialect: format === "messages" ? "messages" : "chat",
    body: JSON.stringify({ ...c.body(model, stream), ...extra }),
  });
}

/** Checks an error body is in the caller's own envelope; returns its message. */
export function errorMessageOf(format: ClientFormatName, body: any): string {
  if (format === "messages") {
    if (
      body?.type !== "error" ||
      typeof body.error?.type !== "string" ||
      typeof body.error?.message !== "string" ||
      typeof body.request_id !== "string"
    ) {
      throw new Error(`not a messages-format error: ${JSON.stringify(body)}`);
    }
    return body.error.message;
  }
  const e = body?.error;
  if (typeof e?.message !== "string" || typeof e?.type !== "string" || !("param" in e) || !("code" in e))
    throw new Error(`not a chat-format error: ${JSON.stringify(body)}`);
  return e.message;
}
