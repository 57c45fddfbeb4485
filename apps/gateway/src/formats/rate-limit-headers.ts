import type { Admission } from "../vocabulary/admission";

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

/** Header names per kind, spelled out once (a name built per reply is one more string to make and flatten). */
const CHAT_NAMES = {
  requests: ["x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"],
  tokens: ["x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"],
} as const;
const ANTHROPIC_NAMES = {
  requests: [
    "anthropic-ratelimit-requests-limit",
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-requests-reset",
  ],
  tokens: [
    "anthropic-ratelimit-tokens-limit",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-tokens-reset",
  ],
} as const;

/** Each kind's three headers under the format's names; `reset` writes the reset the format's way. */
function limitHeaders(
  a: Admission,
  names: typeof CHAT_NAMES | typeof ANTHROPIC_NAMES,
  reset: (resetMs: number) => string,
): Record<string, string> {
  const h: Record<string, string> = {};
  for (const kind of KINDS) {
    const s = a[kind];
    if (!s) continue;
    const [limitName, remainingName, resetName] = names[kind];
    h[limitName] = String(s.limit);
    h[remainingName] = String(s.remaining);
    h[resetName] = reset(s.resetMs);
  }
  return h;
}

/** The chat format's headers: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, reset as a duration. */
export function chatLimitHeaders(a: Admission, _nowMs: number): Record<string, string> {
  return limitHeaders(a, CHAT_NAMES, formatDuration);
}

/** The messages format's headers: `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`, reset as RFC 3339. */
export function anthropicLimitHeaders(a: Admission, nowMs: number): Record<string, string> {
  return limitHeaders(a, ANTHROPIC_NAMES, (resetMs) => rfc3339(nowMs + resetMs));
}
