import type { Target } from "../protocols";
import type { Upstream } from "../vocabulary/target";
import { endpointOfRequest } from "./gen-ai-names";
import type { RequestContext } from "../request/context";
import type { PipelineHooks } from "../request/events";
import type { UsageRecord } from "../storage/store";
import type { Endpoint } from "../vocabulary/format";

/** Why an upstream attempt failed, in a handful of words a dashboard can group by. */
export const UPSTREAM_ERROR_CLASSES = [
  "unreachable",
  "timeout",
  "rate_limited",
  "auth",
  "client",
  "server",
  "malformed",
] as const;
export type UpstreamErrorClass = (typeof UPSTREAM_ERROR_CLASSES)[number];

/** The class of an upstream's error status (0: no answer at all); undefined for a success. */
export function upstreamErrorClass(status: number): UpstreamErrorClass | undefined {
  if (status === 0) return "unreachable";
  if (status < 400) return undefined;
  if (status === 408 || status === 504) return "timeout";
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "auth";
  return status < 500 ? "client" : "server";
}

/**
 * An upstream failure no status event tells of, read from the record: a 200 the client saw fail
 * — a reply that was no reply, or a stream that broke off. (An attempt with no answer at all is
 * told as status 0, one event per attempt.)
 */
function lateUpstreamError(record: UsageRecord, status: number): UpstreamErrorClass | undefined {
  if (record.aborted) return undefined;
  if (record.upstream_status >= 200 && record.upstream_status < 300 && status >= 500) return "malformed";
  return undefined;
}

/** Everything the operations side knows of one finished request, gathered from the pipeline's events. */
export interface RequestSummary {
  ctx: RequestContext;
  endpoint: Endpoint;
  /** The status the client saw. */
  status: number;
  /** The usage record, for a request that reached an upstream. */
  record: UsageRecord | undefined;
  /** The id of the request's key, once it was accepted. */
  keyId: string | undefined;
  /** The catalog model and vendor of the last upstream attempt (undefined: none was made). */
  model: string | undefined;
  vendor: string | undefined;
  /** The vendor's `gen_ai.provider.name` (telemetry/gen-ai-names.ts). */
  upstream: Upstream | undefined;
  attempts: number;
  /** Milliseconds from arrival to the first streamed piece (streams only). */
  ttftMs: number | undefined;
  latencyMs: number;
  streamed: boolean;
}

/** What listens to the trail (metrics, the request log): told once per finished request. */
export interface TrailListener {
  finished(summary: RequestSummary): void;
  upstreamError?(upstream: Upstream, klass: UpstreamErrorClass): void;
  streamStarted?(): void;
}

interface Trail {
  keyId: string | undefined;
  target: Target | undefined;
  attempts: number;
  ttftMs: number | undefined;
  streamed: boolean;
}

function endpointOf(ctx: RequestContext, record: UsageRecord | undefined): Endpoint {
  return record ? record.endpoint : endpointOfRequest(ctx);
}

/**
 * A pipeline subscriber that follows each request from its start to its finish (which upstream,
 * how many attempts, when the first piece went out) and hands one summary to each listener at the
 * end. One map entry per request in flight; nothing is built for a request until it ends.
 */
export class RequestTrail implements PipelineHooks {
  private readonly live = new WeakMap<RequestContext, Trail>();

  constructor(private readonly listeners: readonly TrailListener[]) {}

  onStart(ctx: RequestContext): void {
    this.live.set(ctx, { keyId: undefined, target: undefined, attempts: 0, ttftMs: undefined, streamed: false });
  }

  onAuthenticated(ctx: RequestContext, keyId: string): void {
    const t = this.live.get(ctx);
    if (t) t.keyId = keyId;
  }

  onAttempt(ctx: RequestContext, target: Target, attempt: number): void {
    const t = this.live.get(ctx);
    if (!t) return;
    t.target = target;
    t.attempts = Math.max(t.attempts, attempt);
  }

  onUpstreamResponse(ctx: RequestContext, status: number): void {
    const klass = upstreamErrorClass(status);
    const upstream = this.live.get(ctx)?.target?.upstream;
    if (klass === undefined || upstream === undefined) return;
    for (const l of this.listeners) l.upstreamError?.(upstream, klass);
  }

  onStreamStart(ctx: RequestContext): void {
    const t = this.live.get(ctx);
    if (!t) return;
    t.streamed = true;
    for (const l of this.listeners) l.streamStarted?.();
  }

  onFirstToken(ctx: RequestContext, ms: number): void {
    const t = this.live.get(ctx);
    if (t) t.ttftMs ??= ms;
  }

  onFinish(ctx: RequestContext, status: number, record: UsageRecord | undefined): void {
    const t = this.live.get(ctx);
    this.live.delete(ctx);
    const upstream = t?.target?.upstream;
    const late = record ? lateUpstreamError(record, status) : undefined;
    if (late && upstream !== undefined) for (const l of this.listeners) l.upstreamError?.(upstream, late);
    const summary: RequestSummary = {
      ctx,
      endpoint: endpointOf(ctx, record),
      status,
      record,
      keyId: record?.key_id ?? t?.keyId,
      model: record?.model ?? t?.target?.entry.id,
      vendor: upstream?.vendor,
      upstream,
      attempts: t?.attempts ?? 0,
      ttftMs: t?.ttftMs,
      latencyMs: record?.latency_ms ?? Math.round((performance.now() - ctx.started) * 100) / 100,
      streamed: t?.streamed ?? false,
    };
    for (const l of this.listeners) l.finished(summary);
  }
}
