/**
 * The Lua script wrk runs for one request shape: it sets method, headers and body, and its
 * `done()` prints one line `WRK_RESULT {json}` with the counts and latency percentiles, which
 * `parseWrkOutput` reads (wrk's own text summary rounds and changes units, the JSON does not).
 * No `request()`/`response()` hooks: those would run Lua per request and slow wrk itself down.
 */

/** The marker that starts the JSON line printed by `done()`. */
export const RESULT_MARKER = "WRK_RESULT ";

export interface WrkRequest {
  method: "POST" | "GET";
  headers: Record<string, string>;
  body: string;
}

/** A Lua long-bracket literal holding `s` verbatim (no escaping to get wrong). */
export function luaLongString(s: string): string {
  let level = 0;
  while (s.includes("]" + "=".repeat(level) + "]")) level++;
  const eq = "=".repeat(level);
  // A newline right after the opening bracket is dropped by Lua; a leading one in `s` survives.
  return `[${eq}[${s.startsWith("\n") ? "\n" : ""}${s}]${eq}]`;
}

export function wrkScript(req: WrkRequest): string {
  const lines = [`wrk.method = ${luaLongString(req.method)}`, `wrk.body = ${luaLongString(req.body)}`];
  for (const [k, v] of Object.entries(req.headers))
    lines.push(`wrk.headers[ ${luaLongString(k)} ] = ${luaLongString(v)}`);
  lines.push(
    "",
    "done = function(summary, latency, requests)",
    "  local e = summary.errors",
    "  io.write(string.format(",
    `    '${RESULT_MARKER}{"requests":%d,"duration_us":%d,"bytes":%d,' ..`,
    `    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..`,
    `    '"latency_us":{"min":%d,"mean":%.2f,"stdev":%.2f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\\n',`,
    "    summary.requests, summary.duration, summary.bytes,",
    "    e.connect, e.read, e.write, e.status, e.timeout,",
    "    latency.min, latency.mean, latency.stdev, latency.max,",
    "    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))",
    "end",
    "",
  );
  return lines.join("\n");
}
