import { BatchApi, batchProtocol, isBatchPath } from "./batch-api";
import { LARGE_BODY_CHARS, loopTurn, Slicer } from "./loop-turn";
import { checkAuth } from "./check-auth";
import { countPromptTokensSliced } from "./count-prompt-tokens";
import { cutStream } from "./cut-stream";
import { credential, type Fault, FaultTable, hang, readFault, resetResponse } from "./faults";
import { chatEmbeddings, embedResponse, generateEmbeddings } from "./embed";
import { decideOutcome, type Outcome, type OutcomeDefaults } from "./decide-outcome";
import { getModel, listModels } from "./list-models";
import { matchRoute } from "./match-route";
import { isObject } from "./json-access";
import { errorResponse, renderOutcome, vendorHeaders } from "./render-outcome";
import { type CacheUse, MIN_CACHED_TOKENS, SimPromptCache } from "./prompt-cache";
import { jsonResponse } from "./respond";
import type { CapturedRequest, SimulatorOptions } from "./simulator-options";

/** The simulator's request handler, shared by the HTTP server and the in-process fetch. */
export interface SimulatorHandler {
  handle(req: Request): Promise<Response>;
  requests: CapturedRequest[];
  faults: FaultTable;
}

/** The rate-limit headers of a vendor whose request limit ran out, resetting in `seconds`. */
function rateLimitHeaders(protocol: Parameters<typeof errorResponse>[0], seconds: number): Record<string, string> {
  if (protocol === "messages")
    return {
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": new Date(Date.now() + seconds * 1000).toISOString(),
    };
  if (protocol === "generate") return {};
  return {
    "x-ratelimit-limit-requests": "50",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": `${seconds}s`,
  };
}

/** A fault made: a reset, a hang, or a vendor error after an optional delay (undefined: answer normally after it). */
async function applyFault(
  f: Fault,
  protocol: Parameters<typeof errorResponse>[0],
  req: Request,
  n: number,
): Promise<Response | undefined> {
  if (f.first_byte_ms) await Bun.sleep(f.first_byte_ms);
  if (f.hang) return hang(req.signal);
  if (f.reset) return resetResponse();
  if (!f.status) return undefined;
  const res = errorResponse(
    protocol,
    f.status,
    {
      ...(f.retry_after !== undefined ? { retryAfter: f.retry_after } : {}),
      ...(f.message !== undefined ? { message: f.message } : {}),
      requestId: `req_sim${n}`,
    },
    n,
  );
  // A rate limit says which limit ran out, in the vendor's own headers.
  if (f.status === 429)
    for (const [k, v] of Object.entries(rateLimitHeaders(protocol, f.retry_after ?? 1))) res.headers.set(k, v);
  return res;
}

// Outcomes depend only on (path, body, options), so identical requests (the benchmark's) skip
// parsing, validation, tokenizing, planning and rendering. Bounded; cleared when full.
const CACHE_LIMIT = 512;
const CACHED_BODY_LIMIT = 32 * 1024;
/**
 * The largest request body the simulator answers by default (larger: a 400 in the protocol's
 * format). Reading, counting and planning cost about 0.1 s per MiB of prose on a loaded 2-core
 * machine, and the simulator may run in the gateway's process: one request must not hold it
 * longer. README "Simulator limits".
 */
export const SIM_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_CAPTURE_LIMIT = 100;
/** The origin of the calls a batch's lines are answered by (batch-api.ts). */
const BATCH_LINE_ORIGIN = "http://sim-batch-line.internal";

/**
 * A body's text read as it comes, or `undefined` as soon as it runs past `max` bytes (the rest is
 * not read: the stream is cancelled).
 */
async function readUpTo(req: Request, max: number): Promise<string | undefined> {
  if (!req.body) return "";
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString("utf8");
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

export function createHandler(opts: SimulatorOptions = {}): SimulatorHandler {
  const defaults: OutcomeDefaults = {
    chunks: opts.chunks ?? 12,
    latencyMs: opts.latencyMs ?? 0,
    firstByteMs: opts.firstByteMs ?? 0,
  };
  if (opts.text !== undefined) defaults.text = opts.text;
  if (opts.answerModel !== undefined) defaults.answerModel = opts.answerModel;
  const captureLimit = opts.captureLimit ?? DEFAULT_CAPTURE_LIMIT;
  const maxBodyBytes = opts.maxBodyBytes ?? SIM_MAX_BODY_BYTES;
  const tooLarge = (path: string, query: string, req: Request, size: number, n: number, cut = false) => {
    const protocol = matchRoute(req.method, path, query, req.headers).protocol;
    const message = `Request body of ${cut ? "over " : ""}${size} bytes is larger than the simulator's limit of ${maxBodyBytes} bytes: it answers requests that it can read, count and plan quickly, since it may share its process with the gateway.`;
    return errorResponse(protocol, 400, { message, requestId: `req_sim${n}` }, n);
  };
  const requests: CapturedRequest[] = [];
  const cache = new Map<string, Outcome>();
  const promptCache = new SimPromptCache();
  let seq = 0;
  const faults = new FaultTable();

  async function handle(req: Request): Promise<Response> {
    const n = ++seq;
    // Split the URL by hand: `new URL` costs more than the rest of a cached reply.
    const url = req.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const q = url.indexOf("?", pathStart);
    const path = pathStart === -1 ? "/" : url.slice(pathStart, q === -1 ? undefined : q);
    const query = q === -1 ? "" : url.slice(q + 1);
    const length = req.headers.get("content-length");
    const declared = Number(length ?? 0);
    if (declared > maxBodyBytes) return tooLarge(path, query, req, declared, n);
    // A batch upload of unknown length (streamed, chunked) is read only up to the limit: a 100 MB
    // batch is refused after its first MiB, not read whole first.
    const text =
      req.method !== "POST"
        ? ""
        : length === null && isBatchPath(path)
          ? await readUpTo(req, maxBodyBytes)
          : await req.text();
    if (text === undefined) return tooLarge(path, query, req, maxBodyBytes, n, true);
    if (text.length > maxBodyBytes / 4 && Buffer.byteLength(text) > maxBodyBytes)
      return tooLarge(path, query, req, Buffer.byteLength(text), n);
    let body: unknown;
    // A batch line answered from inside the simulator is no request it received: not captured.
    const capture = captureLimit > 0 && !url.startsWith(BATCH_LINE_ORIGIN);
    if (capture) {
      body = parseBody(text);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      requests.push({
        method: req.method,
        path: q === -1 ? path : `${path}?${query}`,
        headers,
        body: body === undefined && text ? text : body,
      });
      if (requests.length > captureLimit) requests.shift();
    }
    // The fault controls (tests): set one per credential, or clear them.
    if (path === "/_sim/faults") {
      if (req.method === "DELETE") {
        faults.clear();
        return jsonResponse(200, JSON.stringify({ cleared: true }));
      }
      const read = readFault(parseBody(text));
      if (typeof read === "string") return jsonResponse(400, JSON.stringify({ error: { message: read } }));
      faults.set(read.key, read.fault);
      return jsonResponse(200, JSON.stringify({ key: read.key, fault: read.fault }));
    }
    if (isBatchPath(path)) {
      if (path !== "/_sim/batches") {
        const protocol = batchProtocol(path);
        const denied = checkAuth(protocol, req.headers, query, `req_sim${n}`);
        if (denied)
          return jsonResponse(denied.status, denied.body, { ...vendorHeaders(protocol, n), ...denied.headers });
      }
      return batches.handle(req, path, text);
    }
    const route = matchRoute(req.method, path, query, req.headers);
    const auth = checkAuth(route.protocol, req.headers, query, `req_sim${n}`);
    if (auth) return jsonResponse(auth.status, auth.body, { ...vendorHeaders(route.protocol, n), ...auth.headers });
    switch (route.kind) {
      case "unknown": {
        const message =
          route.protocol === "chat" ? `Invalid URL (${req.method} ${path})` : `Not found: ${req.method} ${path}`;
        return errorResponse(route.protocol, 404, { message, requestId: `req_sim${n}` }, n);
      }
      case "embed": {
        const fault = faults.size > 0 ? faults.take(credential(route.protocol, req.headers, query)) : undefined;
        if (fault) {
          const made = await applyFault(fault, route.protocol, req, n);
          if (made) return made;
        }
        const parsed = capture ? body : parseBody(text);
        const reply =
          route.protocol === "generate"
            ? generateEmbeddings(route.model ?? "", route.batch === true, parsed)
            : chatEmbeddings(parsed);
        return embedResponse(reply, vendorHeaders(route.protocol, n));
      }
      case "models":
        return jsonResponse(
          200,
          route.id === undefined ? listModels(route.protocol) : getModel(route.protocol, route.id),
          vendorHeaders(route.protocol, n),
        );
      case "reply":
      case "count": {
        const fault =
          faults.size > 0 && route.kind === "reply"
            ? faults.take(credential(route.protocol, req.headers, query))
            : undefined;
        if (fault) {
          const made = await applyFault(fault, route.protocol, req, n);
          if (made) return made;
        }
        const key = `${path}?${query}\n${text}`;
        let outcome = cache.get(key);
        // Parsed at most once; a large body's steps (parse, count and plan, the prompt cache)
        // each wait for a turn of the event loop, which the simulator may share with the gateway.
        const large = text.length > LARGE_BODY_CHARS;
        let parsed: unknown = capture ? body : undefined;
        const read = async () => {
          if (parsed !== undefined) return parsed;
          parsed = parseBody(text);
          if (large) await loopTurn();
          return parsed;
        };
        if (!outcome) {
          const request = await read();
          // A large body's count is a step of its own, in slices: it is the most of the outcome's work.
          const slicer = new Slicer();
          const counted = large
            ? await countPromptTokensSliced(route.protocol, request, () => slicer.pause())
            : undefined;
          if (large) await loopTurn();
          outcome = decideOutcome(route, request, defaults, counted);
          if (large) await loopTurn();
          if (cache.size >= CACHE_LIMIT) cache.clear();
          // Large bodies are not kept as keys: the cache holds at most CACHE_LIMIT × CACHED_BODY_LIMIT.
          if (text.length <= CACHED_BODY_LIMIT) cache.set(key, outcome);
        }
        if (outcome.kind !== "count" && outcome.firstByteMs > 0) await Bun.sleep(outcome.firstByteMs);
        // The prompt cache has state, so it is applied to each reply, not to the cached outcome.
        if (
          outcome.kind === "reply" &&
          (outcome.protocol === "messages" || outcome.plan.inputTokens >= MIN_CACHED_TOKENS)
        ) {
          const request = await read();
          const slicer = new Slicer();
          let cache: CacheUse | undefined;
          if (isObject(request))
            cache =
              outcome.protocol === "messages"
                ? promptCache.use(request)
                : large
                  ? await promptCache.useAutomaticSliced(outcome.protocol, request, () => slicer.pause())
                  : promptCache.useAutomatic(outcome.protocol, request);
          if (cache) outcome = { ...outcome, plan: { ...outcome.plan, cache } };
          if (large) await loopTurn();
        }
        const res = await renderOutcome(outcome, n);
        return fault?.cut_after === undefined
          ? res
          : cutStream(
              res,
              route.protocol,
              { after: fault.cut_after, at: fault.cut_in ?? "text", kind: fault.cut ?? "reset" },
              req.signal,
            );
      }
      default: {
        const never: never = route;
        throw new Error(`unknown route ${String(never)}`);
      }
    }
  }

  // A batch line is answered by this same handler, as the call made directly, with the batch call's credentials.
  const LINE_HEADERS = ["authorization", "x-api-key", "anthropic-version", "anthropic-beta", "x-goog-api-key"];
  const batches = new BatchApi({ ms: opts.batchMs ?? 0, fail: false }, (path, headers, body) => {
    const sent = new Headers({ "content-type": "application/json" });
    for (const h of LINE_HEADERS) {
      const v = headers.get(h);
      if (v !== null) sent.set(h, v);
    }
    return handle(new Request(`${BATCH_LINE_ORIGIN}${path}`, { method: "POST", headers: sent, body }));
  });

  return { handle, requests, faults };
}
