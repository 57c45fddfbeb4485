// A type-only import: the OpenTelemetry packages load only through the dynamic import below.
import type { Tracing } from "./otlp-tracing";

/** What tracing reads of the configuration (config/config.ts `OpsConfig`). */
export interface TracingConfig {
  otlpEndpoint: string | undefined;
  serviceName: string;
}

/**
 * Tracing when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else nothing: the OpenTelemetry packages are
 * imported here, on demand, so a gateway without an endpoint never loads them and its requests
 * meet no tracing code at all.
 */
export async function startTracing(ops: TracingConfig): Promise<Tracing | undefined> {
  if (!ops.otlpEndpoint) return undefined;
  const { otlpTracing } = await import("./otlp-tracing");
  return otlpTracing(ops.otlpEndpoint, ops.serviceName);
}
