/** A rate-limit decision as the caller is told it (limits/limiter-store.ts decides it; each client format renders it as headers). */

/** What the client is told about one limit, on 200s and 429s alike. */
export interface LimitSnapshot {
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface Admission {
  ok: boolean;
  /** When refused: seconds until a retry can pass. */
  retryAfterS: number;
  /** Which limit refused it. */
  limitedBy: "requests" | "tokens" | null;
  requests: LimitSnapshot | null;
  tokens: LimitSnapshot | null;
}
