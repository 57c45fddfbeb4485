import { invalid } from "../vocabulary/client-errors";
import type { UsageAggregate, UsageRecord } from "../storage/store";
import type { RefusedRequest } from "../telemetry/refused-requests";
import type { RequestLine } from "../vocabulary/request-line";

/**
 * The shapes the dashboard draws and lists, built from the store's own aggregates and records:
 * a zero-filled series per model or key over a range of UTC days (a chart needs every day, the
 * store only has the days with traffic), and a request-log row that carries no prompt or reply.
 */

export type SeriesBy = "model" | "key";
export const SERIES_BY: readonly SeriesBy[] = ["model", "key"];

/** Longest range of one chart: a year of days. */
export const MAX_SERIES_DAYS = 366;

/** The range when none is asked for: the last 14 days, today included. */
const DEFAULT_SERIES_DAYS = 14;

const DAY_MS = 86_400_000;

/** A `YYYY-MM-DD` query parameter as the UTC midnight it names. */
export function dayParam(q: URLSearchParams, name: string, fallback: number): number {
  const v = q.get(name);
  if (v === null || v === "") return fallback;
  const t = Date.parse(`${v}T00:00:00Z`);
  // The round trip refuses days that do not exist (2026-02-30), which some parsers roll over.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(t) || utcDay(t) !== v) {
    throw invalid(`${name}: must be a day as YYYY-MM-DD, got ${JSON.stringify(v)}`, name);
  }
  return t;
}

export const utcDay = (ms: number) => new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

/** The days from `first` to `last` (both UTC midnights, inclusive), checked for order and length. */
export function dayRange(first: number, last: number): string[] {
  if (last < first) throw invalid(`until: ${utcDay(last)} is before since ${utcDay(first)}`, "until");
  const n = (last - first) / DAY_MS + 1;
  if (n > MAX_SERIES_DAYS) throw invalid(`since..until: at most ${MAX_SERIES_DAYS} days, got ${n}`, "since");
  return Array.from({ length: n }, (_, i) => utcDay(first + i * DAY_MS));
}

export interface Series {
  /** A model id or a key id. */
  id: string;
  requests: number[];
  /** Input + output tokens (the ledger's input already counts cache reads and writes). */
  tokens: number[];
  cost_usd: number[];
  /** Requests the client saw fail (status 400 and above) among `requests`. */
  errors: number[];
}

/** Aggregates grouped by day and `by` as one row of numbers per model or key, in day order; biggest spender first. */
export function toSeries(
  days: readonly string[],
  rows: readonly UsageAggregate[],
  by: SeriesBy,
  failed: readonly UsageAggregate[] = [],
): Series[] {
  const index = new Map(days.map((d, i) => [d, i]));
  const series = new Map<string, Series>();
  for (const r of rows) {
    const i = index.get(r.day ?? "");
    const id = (by === "model" ? r.model : r.key_id) ?? "";
    if (i === undefined) continue;
    let s = series.get(id);
    if (!s)
      series.set(
        id,
        (s = {
          id,
          requests: days.map(() => 0),
          tokens: days.map(() => 0),
          cost_usd: days.map(() => 0),
          errors: days.map(() => 0),
        }),
      );
    s.requests[i] = r.requests;
    s.tokens[i] = r.input_tokens + r.output_tokens;
    s.cost_usd[i] = r.cost_usd;
  }
  // The failed among them, grouped the same way (a failed request is always among all requests).
  for (const r of failed) {
    const i = index.get(r.day ?? "");
    const s = series.get((by === "model" ? r.model : r.key_id) ?? "");
    if (i !== undefined && s) s.errors[i] = r.requests;
  }
  const total = (s: Series) => s.cost_usd.reduce((a, b) => a + b, 0);
  return [...series.values()].sort((a, b) => total(b) - total(a) || a.id.localeCompare(b.id));
}

/** One line of the live request log: what happened, never what was said. */
export function requestLine(r: UsageRecord): RequestLine {
  return {
    request_id: r.request_id,
    created_at: r.created_at,
    key_id: r.key_id,
    model: r.model,
    endpoint: r.endpoint,
    stream: r.stream,
    status: r.status,
    latency_ms: r.latency_ms,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    cost_usd: r.cost_usd,
    aborted: r.aborted,
    // An MCP tool call's size (`endpoint: "mcp"`): it has no tokens.
    ...(r.bytes_in != null ? { bytes_in: r.bytes_in, bytes_out: r.bytes_out ?? 0 } : {}),
  };
}

/** A refused request as a line of the live log: nothing used, nothing billed, and why. */
export function refusalLine(r: RefusedRequest): RequestLine {
  return {
    request_id: r.request_id,
    created_at: r.created_at,
    key_id: r.key_id,
    model: "",
    endpoint: r.endpoint,
    stream: false,
    status: r.status,
    latency_ms: r.latency_ms,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    aborted: false,
    refused: true,
    error_type: r.error_type,
    reason: r.reason,
  };
}

/** Two newest-first lists as one, newest first, cut to `limit`. */
export function mergeNewestFirst(a: RequestLine[], b: RequestLine[], limit: number): RequestLine[] {
  if (b.length === 0) return a;
  return [...a, ...b]
    .sort((x, y) => y.created_at.localeCompare(x.created_at) || y.request_id.localeCompare(x.request_id))
    .slice(0, limit);
}

/**
 * The days of `since`..`until` (`YYYY-MM-DD`, both included; default the 14 days up to `now`'s
 * UTC day) and the store filter's bounds (`until` exclusive: the next midnight).
 */
export function seriesRange(q: URLSearchParams, now: number): { days: string[]; since: string; until: string } {
  const last = dayParam(q, "until", now - (now % DAY_MS));
  const first = dayParam(q, "since", last - (DEFAULT_SERIES_DAYS - 1) * DAY_MS);
  return {
    days: dayRange(first, last),
    since: new Date(first).toISOString(),
    until: new Date(last + DAY_MS).toISOString(),
  };
}
