import {
  GatewayError,
  chatUsageToTotals,
  headerSafe,
  convertChatRequestToMessages,
  convertChatResponseToMessages,
  convertGenerateResponseToMessages,
  convertMessagesRequestToChat,
  convertMessagesRequestToGenerate,
  convertMessagesRequestToMessages,
  convertMessagesResponseToChat,
  upstreamErrorToGatewayError,
  type Warning,
} from "@turnpike/providers";
import {
  validateChatRequest,
  validateMessagesRequest,
  type ChatRequest,
  type MessagesRequest,
  type MessagesResponse,
} from "@turnpike/schema";
import type { GatewayDeps } from "../deps";
import type { CatalogEntry } from "../routing/catalog";
import { generateCountBody, upstreamCall, upstreamCountCall, type Upstream } from "../upstream/upstream";
import { rateLimitHeaders } from "../limits/rate-limit-headers";
import type { Admission } from "../limits/rate-limiter";
import { Meter } from "../usage/meter";
import { messagesUsageToTokens } from "../usage/usage-map";
import { authenticate } from "./authenticate";
import { clientAddress, type Connection } from "./client-address";
import { HEADER, errorResponse, idHeaders, type Dialect } from "./dialect";
import { passthroughTap, type InlineTap } from "./passthrough-tap";
import { readJsonBody, validationError } from "./read-body";
import { newRequestId } from "./request-id";
import { relayStream, SSE_HEADERS } from "./relay-stream";
import { resolveModel } from "./resolve";
import { translatedTap } from "./translated-tap";

/** Default output cap when a chat client sends none and the upstream requires one. */
const DEFAULT_MAX_TOKENS = 4096;

/** Fields only Turnpike reads; no upstream ever sees them. */
function stripGatewayFields<T extends object>(body: T): T {
  if (!("turnpike" in body)) return body;
  const { turnpike: _dropped, ...rest } = body as T & { turnpike?: unknown };
  return rest as T;
}

/** The response headers every inference reply carries. */
function replyHeaders(dialect: Dialect, requestId: string, deps: GatewayDeps, entry: CatalogEntry, warnings: Warning[]): Headers {
  const h = new Headers(idHeaders(dialect, requestId));
  const up = deps.upstreams[entry.owned_by];
  h.set(HEADER.upstream, up.simulated ? "simulator" : entry.owned_by);
  // Header values must be plain ASCII; a warning must never turn a good reply into a 500.
  for (const w of warnings) h.append(HEADER.warning, headerSafe(`${w.param}: ${w.message}`));
  return h;
}

function rateLimited(dialect: Dialect, a: Admission, limitHeaders: Record<string, string>, model?: string): GatewayError {
  const what = a.limitedBy === "tokens" ? "tokens per minute" : "requests per minute";
  const limit = (a.limitedBy === "tokens" ? a.tokens : a.requests)?.limit;
  return new GatewayError({
    status: 429,
    type: dialect === "messages" ? "rate_limit_error" : a.limitedBy ?? "requests",
    code: "rate_limit_exceeded",
    message: `Rate limit reached for this key${model ? ` on ${model}` : ""}: ${limit} ${what}. Retry after ${a.retryAfterS} s.`,
    headers: { ...limitHeaders, "retry-after": String(a.retryAfterS), "retry-after-ms": String(a.retryAfterS * 1000) },
  });
}

/**
 * A spent monthly budget: not a rate limit (waiting a minute will not help), so its own error —
 * the messages format's 402 `billing_error`, the chat format's 429 `insufficient_quota` — with
 * `x-should-retry: false` so that clients do not retry in vain (wire-formats.md §4.8).
 */
function budgetExhausted(dialect: Dialect, budget: number, resetsAt: string): GatewayError {
  const message = `This key's monthly budget of $${budget} is spent; it resets at ${resetsAt}.`;
  const headers = { "x-should-retry": "false" };
  return dialect === "messages"
    ? new GatewayError({ status: 402, type: "billing_error", code: "budget_exhausted", message, headers })
    : new GatewayError({ status: 429, type: "insufficient_quota", code: "insufficient_quota", message, headers });
}


/**
 * One inference call, end to end (DESIGN.md §2): authenticate → validate → resolve → dispatch
 * (passthrough when client format and upstream protocol match, else through the messages-format
 * pivot) → relay → meter.
 */
export async function handleInference(deps: GatewayDeps, request: Request, dialect: Dialect, server?: Connection | null): Promise<Response> {
  const address = () => clientAddress(server, request);
  const started = performance.now();
  const requestId = newRequestId();
  let meter: Meter | undefined;
  try {
    const key = authenticate(deps, request.headers, dialect, address);
    const { value: raw, size } = await readJsonBody(request);
    const checked = dialect === "messages" ? validateMessagesRequest(raw) : validateChatRequest(raw);
    if (!checked.ok) throw validationError(checked.issues);
    const clientReq = checked.value as MessagesRequest | ChatRequest;
    const entry = resolveModel(deps.catalog, deps.keys, key, clientReq.model, dialect);
    const stream = clientReq.stream === true;

    // Admit: budget first (its own error), then the key's limits and the model's.
    if (key.budget_usd !== null && deps.budgets.spent(key.id) >= key.budget_usd) throw budgetExhausted(dialect, key.budget_usd, deps.budgets.resetsAt());
    // ~4 characters a token is the up-front estimate; the real count settles it.
    const estimate = Math.ceil(size / 4);
    const perModel = key.model_limits?.[entry.id];
    const modelLimits = perModel ? { rpm: perModel.rpm ?? null, tpm: perModel.tpm ?? null } : undefined;
    const modelBucket = `${key.id}|${entry.id}`;
    const admission = deps.limiter.admit(key.id, key, estimate);
    if (!admission.ok) throw rateLimited(dialect, admission, rateLimitHeaders(dialect, admission, Date.now()));
    const modelAdmission = modelLimits ? deps.limiter.admit(modelBucket, modelLimits, estimate) : undefined;
    if (modelAdmission && !modelAdmission.ok) {
      deps.limiter.settle(key.id, key, estimate, 0);
      throw rateLimited(dialect, modelAdmission, rateLimitHeaders(dialect, modelAdmission, Date.now()), entry.id);
    }
    const limitHeaders = rateLimitHeaders(dialect, admission, Date.now());
    meter = new Meter(deps.usage, deps.catalog, deps.countText, requestId, key, entry, dialect, stream, started, (r) => {
      const actual = r.input_tokens + r.output_tokens;
      deps.limiter.settle(key.id, key, estimate, actual);
      if (modelLimits) deps.limiter.settle(modelBucket, modelLimits, estimate, actual);
      deps.budgets.add(key.id, r.cost_usd);
    });

    const up = deps.upstreams[entry.owned_by];
    const protocol = entry.protocol;
    const passthrough = (dialect === "messages" && protocol === "messages") || (dialect === "chat" && protocol === "chat");

    // Build the upstream body.
    let upstreamBody: object;
    let warnings: Warning[] = [];
    let pivot: MessagesRequest | undefined;
    let includeUsage = false;
    let promptTokens = 0;
    /** Upstream tool names that had to be shortened or renamed → the client's names. */
    let toolNames: Parameters<typeof convertChatResponseToMessages>[1]["toolNames"];
    if (passthrough) {
      const body = { ...stripGatewayFields(clientReq), model: entry.upstream_model } as Record<string, unknown>;
      if (dialect === "chat" && stream) {
        // Always ask a chat upstream for usage, whatever the client asked (wire-formats §4.1).
        const so = (body.stream_options ?? {}) as Record<string, unknown>;
        includeUsage = so.include_usage === true;
        body.stream_options = { ...so, include_usage: true };
      }
      upstreamBody = body;
      // Only needed if the client leaves before the upstream reports usage.
      meter.estimatePrompt = () =>
        deps.countPrompt(
          dialect === "chat"
            ? convertChatRequestToMessages(clientReq as ChatRequest, { defaultMaxTokens: DEFAULT_MAX_TOKENS, target: "chat" }).request
            : (clientReq as MessagesRequest),
        );
    } else {
      let p: MessagesRequest;
      if (dialect === "chat") {
        const r = convertChatRequestToMessages(clientReq as ChatRequest, { defaultMaxTokens: DEFAULT_MAX_TOKENS, target: protocol });
        p = r.request;
        warnings = warnings.concat(r.warnings);
        includeUsage = (clientReq as ChatRequest).stream_options?.include_usage === true;
      } else {
        p = clientReq as MessagesRequest;
      }
      pivot = p;
      if (protocol === "chat") {
        const r = convertMessagesRequestToChat(p, { upstreamModel: entry.upstream_model });
        upstreamBody = r.body;
        toolNames = r.toolNames;
        warnings = warnings.concat(r.warnings);
      } else if (protocol === "generate") {
        const r = convertMessagesRequestToGenerate(p, { signatures: deps.signatures, upstreamModel: entry.upstream_model });
        upstreamBody = r.body;
        toolNames = r.toolNames;
        warnings = warnings.concat(r.warnings);
      } else {
        const r = convertMessagesRequestToMessages(p, { upstreamModel: entry.upstream_model });
        upstreamBody = r.body;
        warnings = warnings.concat(r.warnings);
      }
      // Prompt count made before the first byte: the messages format reports input tokens in
      // `message_start`, which chat and generateContent upstreams only tell at the end.
      if (stream && protocol !== "messages") {
        const counted = deps.countPrompt(p);
        promptTokens = counted;
        meter.estimatePrompt = () => counted;
      }
    }

    // Dispatch. A client that goes away aborts the upstream at once: its request's own signal
    // is the upstream call's (and a cancelled stream cancels the upstream body).
    const signal = request.signal;
    const call = upstreamCall(up, entry, protocol, stream, request.headers);
    // A messages client sees the input count in `message_start`, before the reply: where the
    // upstream can count (generateContent), ask it alongside the call itself.
    const exactCount = stream && dialect === "messages" && protocol === "generate" ? countUpstream(deps, up, entry, upstreamBody, signal) : undefined;
    let upstream: Response;
    try {
      upstream = await deps.fetch(call.url, {
        method: "POST",
        headers: call.headers,
        body: JSON.stringify(upstreamBody),
        signal,
      });
    } catch (e) {
      if (signal.aborted) {
        await meter.finish(499, { aborted: true });
        return new Response(null, { status: 499 });
      }
      throw new GatewayError({
        status: 502,
        type: dialect === "messages" ? "api_error" : "server_error",
        message: `Could not reach the ${entry.owned_by} upstream: ${(e as Error).message}`,
      });
    }
    meter.upstreamStatus = upstream.status;
    if (exactCount) promptTokens = (await exactCount) ?? promptTokens;
    const headers = replyHeaders(dialect, requestId, deps, entry, warnings);
    for (const [k, v] of Object.entries(limitHeaders)) headers.set(k, v);

    if (!upstream.ok) {
      const text = await upstream.text();
      const err = upstreamErrorToGatewayError(protocol, upstream.status, text, upstream.headers);
      await meter.finish(err.status);
      return errorResponse(dialect, err, requestId, Object.fromEntries(headers));
    }

    // JSON reply.
    if (!stream) {
      const text = await upstream.text();
      let out: string;
      if (passthrough) {
        const parsed = JSON.parse(text) as Record<string, unknown>;
        readPassthroughUsage(dialect, parsed, meter);
        if (entry.upstream_model !== entry.id) {
          parsed.model = entry.id;
          out = JSON.stringify(parsed);
        } else {
          out = text; // relay the bytes as they came
        }
      } else {
        const json: unknown = JSON.parse(text);
        const ctx = { model: entry.id, stopSequences: pivot?.stop_sequences, toolNames };
        let res: MessagesResponse;
        // Vendor replies are read leniently: each converter reads only the fields it uses.
        if (protocol === "chat") res = convertChatResponseToMessages(json as never, ctx);
        else if (protocol === "generate") res = convertGenerateResponseToMessages(json as never, { ...ctx, signatures: deps.signatures });
        else res = { ...(json as MessagesResponse), model: entry.id };
        meter.report(messagesUsageToTokens(res.usage));
        meter.reported = true;
        out = JSON.stringify(dialect === "messages" ? res : convertMessagesResponseToChat(res, { model: entry.id }));
      }
      // The record is committed before the client sees the reply.
      await meter.finish(200);
      headers.set("content-type", "application/json");
      return new Response(out, { status: 200, headers });
    }

    // Stream reply: the upstream body goes straight to the relay, which runs the tap in place —
    // the light usage reader of a passthrough, or the whole translation.
    const tap: InlineTap = passthrough
      ? passthroughTap(dialect, meter, { includeUsage, renameModel: entry.upstream_model !== entry.id ? entry.id : undefined })
      : translatedTap(
          protocol,
          dialect,
          { model: entry.id, inputTokens: promptTokens, stopSequences: pivot?.stop_sequences, toolNames, signatures: deps.signatures, includeUsage },
          meter,
        );
    const m = meter;
    const relayed = relayStream(upstream.body!, {
      dialect,
      tap,
      keepAliveMs: deps.config.keepAliveSeconds * 1000,
      onEnd: (how) => {
        return m.finish(200, { aborted: how === "aborted" });
      },
    });
    for (const [k, v] of Object.entries(SSE_HEADERS)) headers.set(k, v);
    // A stream may be quiet for long stretches (thinking); Bun counts only reads as activity,
    // so its idle timeout would cut it whatever we write: lift it for this request alone.
    server?.timeout(request, 0);
    return new Response(relayed, { status: 200, headers });
  } catch (e) {
    const err = e instanceof GatewayError ? e : undefined;
    await meter?.finish(err?.status ?? 500);
    return errorResponse(dialect, e, requestId);
  }
}

/** The upstream's own count of a generateContent prompt, or undefined if it could not say. */
async function countUpstream(deps: GatewayDeps, up: Upstream, entry: CatalogEntry, body: object, signal: AbortSignal): Promise<number | undefined> {
  const call = upstreamCountCall(up, entry, "generate");
  if (!call) return undefined;
  try {
    const res = await deps.fetch(call.url, { method: "POST", headers: call.headers, body: JSON.stringify(generateCountBody(body, entry)), signal });
    if (!res.ok) return undefined;
    const n = Number(((await res.json()) as { totalTokens?: unknown }).totalTokens);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined; // the local count stands
  }
}

/** Usage of a passthrough JSON reply, in either format. */
function readPassthroughUsage(dialect: Dialect, body: Record<string, unknown>, meter: Meter): void {
  meter.report(dialect === "messages" ? messagesUsageToTokens(body.usage) : chatUsageToTotals(body.usage));
  meter.reported = true;
}
