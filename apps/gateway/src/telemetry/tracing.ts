import type { OpsConfig } from "../config/config";
import type { PipelineHooks } from "../pipeline/events";

/** Traces of requests: a pipeline subscriber, and how to flush what it holds at shutdown. */
export interface Tracing {
  hooks: PipelineHooks;
  shutdown(): Promise<void>;
}

/**
 * Tracing when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else nothing: the OpenTelemetry packages are
 * imported here, on demand, so a gateway without an endpoint never loads them and its requests
 * meet no tracing code at all.
 */
export async function startTracing(ops: OpsConfig): Promise<Tracing | undefined> {
  if (!ops.otlpEndpoint) return undefined;
  const { otlpTracing } = await import("./otlp-tracing");
  return otlpTracing(ops.otlpEndpoint, ops.serviceName);
}
