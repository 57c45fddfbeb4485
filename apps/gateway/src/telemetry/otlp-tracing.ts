import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { RequestContext } from "../request/context";
import type { FinishedOperation, PipelineHooks } from "../request/events";
import type { Target } from "../protocols";
import type { UsageRecord } from "../storage/store";
import { endpointOfRequest, OPERATION_NAMES } from "./gen-ai-names";
import { ATTR, requestAttributes, usageAttributes } from "./span-attributes";

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

interface Spans {
  root: Span;
  attempt: Span | undefined;
}

/** Traces of requests: a pipeline subscriber, and how to flush what it holds at shutdown. */
export interface Tracing {
  hooks: PipelineHooks;
  shutdown(): Promise<void>;
}

/**
 * One span per request (kind server), a child per upstream attempt (kind client), exported in
 * batches over OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. A request that carries a W3C
 * `traceparent` joins the caller's trace. Spans are parented by explicit contexts, not by a
 * global context manager: the pipeline's events say which request they belong to.
 */
class OtlpTracer implements PipelineHooks {
  private readonly live = new WeakMap<RequestContext, Spans>();
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(private readonly tracer: Tracer) {}

  onStart(ctx: RequestContext): void {
    const parent = this.propagator.extract(ROOT_CONTEXT, ctx.request.headers, headerGetter);
    const root = this.tracer.startSpan(
      ctx.format.endpoint,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR.requestId]: ctx.id,
          [ATTR.operation]: OPERATION_NAMES[endpointOfRequest(ctx)],
          "http.request.method": ctx.request.method,
        },
      },
      parent,
    );
    this.live.set(ctx, { root, attempt: undefined });
  }

  /** An operation beside the pipeline (an MCP request): one server span, from its arrival to its end. */
  onOperation(op: FinishedOperation): void {
    const parent = op.headers ? this.propagator.extract(ROOT_CONTEXT, op.headers, headerGetter) : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      `${op.endpoint} ${op.method}`,
      {
        kind: SpanKind.SERVER,
        startTime: op.startedAt,
        attributes: {
          [ATTR.requestId]: op.requestId,
          [ATTR.keyId]: op.keyId,
          "turnpike.operation": op.method,
          "turnpike.operation.name": op.name,
          ...(op.server ? { "turnpike.mcp.server": op.server } : {}),
          "turnpike.status": op.status,
        },
      },
      parent,
    );
    if (op.status >= 400) span.setAttribute(ATTR.errorType, String(op.status));
    if (op.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `status ${op.status}` });
    span.end(op.endedAt);
  }

  onAttempt(ctx: RequestContext, target: Target, attempt: number): void {
    const spans = this.live.get(ctx);
    if (!spans) return;
    spans.attempt?.end();
    spans.root.setAttributes(requestAttributes(target));
    // The conventions' span name: `{gen_ai.operation.name} {gen_ai.request.model}`.
    const op = OPERATION_NAMES[endpointOfRequest(ctx)];
    spans.root.updateName(`${op} ${target.entry.id}`);
    spans.attempt = this.tracer.startSpan(
      `${op} ${target.entry.upstream_model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...requestAttributes(target),
          [ATTR.requestModel]: target.entry.upstream_model,
          [ATTR.attempt]: attempt,
        },
      },
      trace.setSpan(ROOT_CONTEXT, spans.root),
    );
  }

  onUpstreamResponse(ctx: RequestContext, status: number): void {
    const attempt = this.live.get(ctx)?.attempt;
    if (!attempt) return;
    attempt.setAttribute("http.response.status_code", status);
    if (status === 0 || status >= 400) {
      // error.type: the conventions' low-cardinality class of a failure, here the status code (or that none came).
      attempt.setAttribute(ATTR.errorType, status === 0 ? "unreachable" : String(status));
      attempt.setStatus({
        code: SpanStatusCode.ERROR,
        message: status === 0 ? "upstream unreachable" : `upstream status ${status}`,
      });
    }
  }

  onFinish(
    ctx: RequestContext,
    status: number,
    record: UsageRecord | undefined,
    finishReason?: () => string | undefined,
  ): void {
    const spans = this.live.get(ctx);
    if (!spans) return;
    this.live.delete(ctx);
    const usage = record ? usageAttributes(record) : {};
    const reason = finishReason?.();
    if (reason) usage[ATTR.finishReasons] = [reason];
    if (spans.attempt) {
      spans.attempt.setAttributes(usage);
      spans.attempt.end();
    }
    spans.root.setAttributes({ ...usage, "http.response.status_code": status });
    if (status >= 400) spans.root.setAttribute(ATTR.errorType, String(status));
    if (status >= 500) spans.root.setStatus({ code: SpanStatusCode.ERROR, message: `status ${status}` });
    spans.root.end();
  }
}

export function otlpTracing(endpoint: string, serviceName: string): Tracing {
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  return {
    hooks: new OtlpTracer(provider.getTracer("turnpike")),
    shutdown: () => provider.shutdown(),
  };
}
