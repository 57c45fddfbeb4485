import { RESULT_MARKER } from "./wrk-script";

/** What one wrk run measured (from the `done()` line of `wrkScript`). */
export interface WrkResult {
  /** Completed requests (responses read), errors included. */
  requests: number;
  durationUs: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyUs: {
    min: number;
    mean: number;
    stdev: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p999: number;
  };
}

/** Requests per second over the run. */
export function rps(r: WrkResult): number {
  return r.durationUs > 0 ? (r.requests * 1e6) / r.durationUs : 0;
}

/** Requests that did not complete with a 2xx/3xx (status ≥ 400, socket errors, timeouts). */
export function errorCount(r: WrkResult): number {
  const e = r.errors;
  const n = e.connect + e.read + e.write + e.status + e.timeout;
  // A run that completed nothing is not a measure, whatever wrk counted as errors.
  return r.requests === 0 ? Math.max(1, n) : n;
}

function num(o: Record<string, unknown>, key: string, where: string): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw new Error(`wrk result: ${where}${key} must be a non-negative number, got ${JSON.stringify(v)}`);
  }
  return v;
}

function obj(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new Error(`wrk result: ${where} must be an object, got ${JSON.stringify(v)}`);
  return v as Record<string, unknown>; // checked to be a plain object just above
}

/**
 * Reads the result line out of wrk's stdout (wrk's own summary text around it is ignored).
 * Throws, quoting the output, when the line is missing or malformed — e.g. wrk could not connect.
 */
export function parseWrkOutput(stdout: string): WrkResult {
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT_MARKER));
  if (!line)
    throw new Error(`wrk printed no ${RESULT_MARKER.trim()} line; its output was:\n${stdout.trim() || "(nothing)"}`);
  let raw: unknown;
  try {
    raw = JSON.parse(line.slice(RESULT_MARKER.length));
  } catch (e) {
    throw new Error(`wrk result line is not JSON (${e instanceof Error ? e.message : String(e)}): ${line}`);
  }
  const o = obj(raw, "the result");
  const e = obj(o.errors, "errors");
  const l = obj(o.latency_us, "latency_us");
  const requests = num(o, "requests", "");
  // With no request completed, wrk's empty histogram reports its minimum as -2^63: no latency to read.
  const lat = (key: string) => (requests === 0 ? 0 : num(l, key, "latency_us."));
  return {
    requests,
    durationUs: num(o, "duration_us", ""),
    bytes: num(o, "bytes", ""),
    errors: {
      connect: num(e, "connect", "errors."),
      read: num(e, "read", "errors."),
      write: num(e, "write", "errors."),
      status: num(e, "status", "errors."),
      timeout: num(e, "timeout", "errors."),
    },
    latencyUs: {
      min: lat("min"),
      mean: lat("mean"),
      stdev: lat("stdev"),
      max: lat("max"),
      p50: lat("p50"),
      p90: lat("p90"),
      p99: lat("p99"),
      p999: lat("p999"),
    },
  };
}
