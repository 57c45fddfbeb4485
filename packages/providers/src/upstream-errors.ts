/**
 * Upstream error envelopes (docs/protocols.md §1.8, §2.7, §3.8) → `GatewayError` with the status,
 * type and retry headers the client's SDK should see (§4.8).
 */
import { GatewayError, MESSAGES_TYPE_SET, messagesErrorTypeForStatus, type Protocol } from "./errors.js";
import { isRecord as isObject } from "./json.js";

type HeaderSource = Headers | Record<string, string> | undefined;

function header(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

/** Retry headers the upstream sent that the client's SDK honours (docs/protocols.md §1.9, §2.8). */
function retryHeaders(headers: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["retry-after", "retry-after-ms", "x-should-retry"]) {
    const v = header(headers, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function fallbackMessage(protocol: Protocol, status: number, bodyText: string): string {
  const snippet = bodyText.trim().slice(0, 200);
  return `The ${protocol} upstream returned HTTP ${status}${snippet ? `: ${snippet}` : " with an empty body"}`;
}

/**
 * Translates an upstream error reply (any of the three envelopes) into a `GatewayError` whose
 * status, type and retry headers are what the client's SDK should see (docs/protocols.md §4.8).
 *
 * @example
 * ```ts
 * const err = upstreamErrorToGatewayError("generate", 400, body, res.headers);
 * // Gemini's 400 API_KEY_INVALID → status 401, authentication_error
 * ```
 */
export function upstreamErrorToGatewayError(
  protocol: Protocol,
  status: number,
  bodyText: string,
  headers?: HeaderSource,
): GatewayError {
  switch (protocol) {
    case "messages":
      return fromMessagesUpstream(status, bodyText, headers);
    case "chat":
    case "responses":
      // The Responses API answers errors in the chat envelope (docs/protocols.md §5.2).
      return fromChatUpstream(status, bodyText, headers);
    case "generate":
      return fromGenerateUpstream(status, bodyText, headers);
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

function fromMessagesUpstream(status: number, bodyText: string, headers: HeaderSource): GatewayError {
  const body = parseJson(bodyText);
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const type = str(error?.type);
  return new GatewayError({
    status: status === 503 ? 529 : status,
    type: type && MESSAGES_TYPE_SET.has(type) ? type : messagesErrorTypeForStatus(status),
    message: str(error?.message) ?? fallbackMessage("messages", status, bodyText),
    headers: retryHeaders(headers),
  });
}

/** Codes that mean "your money ran out": retrying never helps (docs/protocols.md §2.7). */
const CHAT_QUOTA_CODES = new Set(["insufficient_quota", "credit_balance_exhausted", "billing_hard_limit_reached"]);

function fromChatUpstream(status: number, bodyText: string, headers: HeaderSource): GatewayError {
  const body = parseJson(bodyText);
  // Some compatible vendors answer `{error:"text"}` or a bare `{message}`.
  const error = isObject(body) ? (isObject(body.error) ? body.error : body) : undefined;
  const code = str(error?.code) ?? (typeof error?.code === "number" ? String(error.code) : undefined);
  const type = str(error?.type);
  const message =
    str(error?.message) ?? (isObject(body) ? str(body.error) : undefined) ?? fallbackMessage("chat", status, bodyText);
  const param = str(error?.param);
  const h = retryHeaders(headers);
  const quota = (code !== undefined && CHAT_QUOTA_CODES.has(code)) || type === "insufficient_quota";
  if (quota) {
    h["x-should-retry"] = "false";
    return new GatewayError({
      status: 429,
      type: "rate_limit_error",
      code: "insufficient_quota",
      message,
      ...(param ? { param } : {}),
      headers: h,
    });
  }
  const overloaded = status === 503 || code === "server_is_overloaded";
  const mapped = overloaded ? 529 : status;
  return new GatewayError({
    status: mapped,
    type: messagesErrorTypeForStatus(mapped),
    message,
    ...(code ? { code } : {}),
    ...(param ? { param } : {}),
    headers: h,
  });
}

/** Gemini's canonical status names → HTTP status (docs/protocols.md §3.8). */
const GENERATE_STATUS: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNKNOWN: 500,
  UNAVAILABLE: 529,
  DEADLINE_EXCEEDED: 504,
};

/** `"34.4s"` → 35 (whole seconds, rounded up). */
export function parseRetryDelaySeconds(delay: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  if (!m?.[1]) return undefined;
  return Math.max(1, Math.ceil(Number(m[1])));
}

function fromGenerateUpstream(status: number, bodyText: string, headers: HeaderSource): GatewayError {
  let body = parseJson(bodyText);
  // Non-SSE streams wrap the error in an array: `[{"error":{…}}]` (docs/protocols.md §3.8).
  if (Array.isArray(body)) body = body[0];
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const message = str(error?.message) ?? fallbackMessage("generate", status, bodyText);
  const rpcStatus = str(error?.status);
  const details = Array.isArray(error?.details) ? error.details.filter(isObject) : [];
  const reasons = details.map((d) => str(d.reason)).filter((r): r is string => r !== undefined);
  const h = retryHeaders(headers);

  let mapped = (rpcStatus && GENERATE_STATUS[rpcStatus]) || (status === 503 ? 529 : status);
  let code: string | undefined;
  // An invalid key is a 400 on Gemini; clients expect 401 (docs/protocols.md §3.8, §4.8).
  if (reasons.includes("API_KEY_INVALID") || reasons.includes("API_KEY_EXPIRED")) mapped = 401;
  if (rpcStatus === "FAILED_PRECONDITION") h["x-should-retry"] = "false"; // billing / region: retrying never helps

  if (mapped === 429) {
    const retryInfo = details.find((d) => str(d["@type"])?.endsWith("google.rpc.RetryInfo"));
    const seconds =
      retryInfo && typeof retryInfo.retryDelay === "string" ? parseRetryDelaySeconds(retryInfo.retryDelay) : undefined;
    if (seconds !== undefined) h["retry-after"] = String(seconds);
    const quota = details.find((d) => str(d["@type"])?.endsWith("google.rpc.QuotaFailure"));
    const quotaIds = Array.isArray(quota?.violations)
      ? quota.violations.filter(isObject).map((v) => str(v.quotaId) ?? "")
      : [];
    // A per-minute quota with a RetryInfo is a rate limit: retrying after the delay works.
    // A daily quota, or a quota failure with no retry hint, is exhausted: tell clients to stop.
    const exhausted = quota !== undefined && (seconds === undefined || quotaIds.some((id) => /PerDay/i.test(id)));
    if (exhausted) {
      h["x-should-retry"] = "false";
      code = "insufficient_quota";
    } else {
      code = "rate_limit_exceeded";
    }
  }
  return new GatewayError({
    status: mapped,
    type: messagesErrorTypeForStatus(mapped),
    message,
    ...(code ? { code } : {}),
    headers: h,
  });
}

/** A chat-format error object seen inside a stream (no HTTP status): infer one from type/code. */
export function chatStreamErrorToGatewayError(error: unknown): GatewayError {
  const e = isObject(error) ? error : {};
  const type = str(e.type);
  const code = str(e.code) ?? (typeof e.code === "number" ? String(e.code) : undefined);
  let status = typeof e.code === "number" && e.code >= 400 && e.code < 600 ? e.code : 500;
  if (type === "invalid_request_error") status = 400;
  if (type === "rate_limit_exceeded" || type === "requests" || type === "tokens" || code === "rate_limit_exceeded")
    status = 429;
  if (type === "service_unavailable_error" || code === "server_is_overloaded") status = 503;
  if (type === "insufficient_quota") status = 429;
  const message = str(e.message) ?? "The upstream reported an error in the middle of the stream";
  return upstreamErrorToGatewayError("chat", status, JSON.stringify({ error: { ...e, message } }), undefined);
}
