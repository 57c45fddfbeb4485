import { sessionOf } from "../dispatch/session-id";
import { clientRequestId } from "../http/request-id";
import type { LogFields, Logger } from "../log/logger";
import type { RequestSummary, TrailListener } from "./request-trail";

const NO_BODY: Readonly<Record<string, unknown>> = Object.freeze({});

/** The fields of a request's log line: who, what, how it went, what it used. Never a body, never a secret. */
export function requestLogFields(s: RequestSummary): LogFields {
  const r = s.record;
  return {
    request_id: s.ctx.id,
    // The caller's own x-request-id, when it was kept (the reply's x-request-id is then this one).
    client_request_id: clientRequestId(s.ctx.request),
    key_id: s.keyId,
    endpoint: s.endpoint,
    model: s.model,
    vendor: s.vendor,
    status: s.status,
    upstream_status: r?.upstream_status,
    attempts: s.attempts,
    stream: r?.stream,
    latency_ms: s.latencyMs,
    ttft_ms: s.ttftMs === undefined ? undefined : Math.round(s.ttftMs * 100) / 100,
    input_tokens: r?.input_tokens,
    output_tokens: r?.output_tokens,
    cache_read_tokens: r?.cache_read_tokens,
    cache_write_tokens: r?.cache_write_tokens,
    cost_usd: r?.cost_usd,
    aborted: r?.aborted ?? false,
    // What the coding agents announce (consumed, never forwarded): their session and their name.
    session: sessionOf(s.ctx.request.headers, NO_BODY),
    client: s.ctx.request.headers.get("user-agent")?.slice(0, 120) ?? undefined,
  };
}

/** One line per finished request, at `info` (`TURNPIKE_LOG_LEVEL=warn` turns them off). */
export function requestLog(logger: Logger): TrailListener {
  return { finished: (s) => logger.request(requestLogFields(s)) };
}
