import type { Dialect } from "../pipeline/dialect";
import type { Admission } from "./rate-limiter";

/** `1m30s`, `12s`, `450ms`: the chat format's reset durations. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

/**
 * The rate-limit headers each format's clients read, on every reply of a limited key:
 * chat: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset as a duration);
 * messages: `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}` (reset as RFC 3339).
 */
export function rateLimitHeaders(dialect: Dialect, a: Admission, nowMs: number): Record<string, string> {
  const h: Record<string, string> = {};
  for (const kind of ["requests", "tokens"] as const) {
    const s = a[kind];
    if (!s) continue;
    if (dialect === "chat") {
      h[`x-ratelimit-limit-${kind}`] = String(s.limit);
      h[`x-ratelimit-remaining-${kind}`] = String(s.remaining);
      h[`x-ratelimit-reset-${kind}`] = formatDuration(s.resetMs);
    } else {
      h[`anthropic-ratelimit-${kind}-limit`] = String(s.limit);
      h[`anthropic-ratelimit-${kind}-remaining`] = String(s.remaining);
      h[`anthropic-ratelimit-${kind}-reset`] = new Date(nowMs + s.resetMs).toISOString().replace(/\.\d{3}Z$/, "Z");
    }
  }
  return h;
}
