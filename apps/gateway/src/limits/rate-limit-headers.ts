import type { Admission } from "../state/limiter-store";

/** `1m30s`, `12s`, `450ms`: the chat format's reset durations. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

const KINDS = ["requests", "tokens"] as const;

/** RFC 3339 at whole seconds, the messages format's reset; the last one is reused within its second. */
let lastSecond = -1;
let lastStamp = "";
function rfc3339(ms: number): string {
  const sec = Math.ceil(ms / 1000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    lastStamp = new Date(sec * 1000).toISOString().replace(".000Z", "Z");
  }
  return lastStamp;
}

/** The chat format's headers: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, reset as a duration. */
export function chatLimitHeaders(a: Admission, _nowMs: number): Record<string, string> {
  const h: Record<string, string> = {};
  for (const kind of KINDS) {
    const s = a[kind];
    if (!s) continue;
    h[`x-ratelimit-limit-${kind}`] = String(s.limit);
    h[`x-ratelimit-remaining-${kind}`] = String(s.remaining);
    h[`x-ratelimit-reset-${kind}`] = formatDuration(s.resetMs);
  }
  return h;
}

/** The messages format's headers: `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`, reset as RFC 3339. */
export function anthropicLimitHeaders(a: Admission, nowMs: number): Record<string, string> {
  const h: Record<string, string> = {};
  for (const kind of KINDS) {
    const s = a[kind];
    if (!s) continue;
    h[`anthropic-ratelimit-${kind}-limit`] = String(s.limit);
    h[`anthropic-ratelimit-${kind}-remaining`] = String(s.remaining);
    h[`anthropic-ratelimit-${kind}-reset`] = rfc3339(nowMs + s.resetMs);
  }
  return h;
}
