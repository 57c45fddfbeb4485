/**
 * The admin API as the dashboard calls it. The admin key lives in sessionStorage only: it is
 * gone when the tab closes, never written to localStorage or a cookie, and sent only to this
 * origin in the `Authorization` header.
 */
const STORAGE_KEY = "turnpike.adminKey";

/** With single sign-on the session is an HttpOnly cookie; the page keeps only its CSRF token. */
const CSRF_KEY = "turnpike.csrf";

export const session = {
  get: (): string | null => sessionStorage.getItem(STORAGE_KEY),
  set: (key: string) => sessionStorage.setItem(STORAGE_KEY, key),
  clear: () => {
    sessionStorage.removeItem(STORAGE_KEY);
    sessionStorage.removeItem(CSRF_KEY);
  },
  csrf: (): string | null => sessionStorage.getItem(CSRF_KEY),
};

/**
 * Whether the browser is signed in through the gateway's single sign-on (`ok`, its CSRF token
 * kept), could be (`available`: sign-on is configured), or the gateway has none (`off`).
 */
export async function signOnState(): Promise<"ok" | "available" | "off"> {
  const res = await fetch("/auth/session").catch(() => null);
  if (!res || res.status === 404) return "off";
  if (!res.ok) return "available";
  const body = (await res.json()) as { csrf_token: string }; // GET /auth/session's documented reply
  sessionStorage.setItem(CSRF_KEY, body.csrf_token);
  return "ok";
}

/** Ends a single sign-on session on the gateway (the cookie is cleared by its reply). */
export async function signOnEnd(): Promise<void> {
  const csrf = session.csrf();
  if (csrf) await fetch("/auth/logout", { method: "POST", headers: { "x-csrf-token": csrf } }).catch(() => undefined);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Calls the admin API with the session's key; an error reply becomes an ApiError with the gateway's own message. */
export async function api<T>(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<T> {
  const key = init.key ?? session.get();
  const method = init.method ?? "GET";
  const csrf = session.csrf();
  // The admin key when there is one; else the sign-on cookie goes by itself, and a change carries the CSRF token.
  const auth: Record<string, string> =
    key !== null
      ? { authorization: `Bearer ${key}` }
      : csrf !== null && method !== "GET"
        ? { "x-csrf-token": csrf }
        : {};
  const res = await fetch(path, {
    method,
    headers: { ...auth, ...(init.body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  const json: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const message = (json as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${res.status}`;
    throw new ApiError(res.status, message);
  }
  return json as T; // the admin API's documented reply for this path
}

/**
 * Every item of a paginated list (`GET /admin/keys`): its pages in order, each asked for with
 * the cursor the one before gave.
 */
export async function allPages<T>(path: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page: { data: T[]; next_cursor?: string | null } = await api(
      cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`,
    );
    out.push(...page.data);
    cursor = page.next_cursor ?? null;
  } while (cursor !== null);
  return out;
}

export interface Key {
  id: string;
  name: string;
  prefix: string;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  budget_usd: number | null;
  spent_this_month_usd?: number;
  expires_at: string | null;
  previous_secret_valid_until: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** A key as `POST /admin/keys` and rotate return it: with its secret, shown once. */
export type KeyWithSecret = Key & { key: string };

export interface Series {
  id: string;
  requests: number[];
  tokens: number[];
  cost_usd: number[];
  /** Requests the client saw fail, among `requests`. */
  errors: number[];
}

export interface Daily {
  by: "model" | "key" | "team" | "user";
  days: string[];
  series: Series[];
}

/** The gateway's own definition (a type import: nothing of the gateway is bundled). */
export type { RequestLine } from "../../gateway/src/vocabulary/request-line";
export type { LatencyRow } from "../../gateway/src/vocabulary/latency-row";

export interface Model {
  id: string;
  display_name: string;
  vendor: string;
  protocol: string;
  context_window: number;
  max_output_tokens: number;
  pricing: {
    input_per_mtok: number;
    output_per_mtok: number;
    cache_read_per_mtok: number;
    cache_write_5m_per_mtok: number;
  };
}

/** One row of `GET /admin/deployments`. */
export interface Deployment {
  model?: string;
  /** Unique within its model: the vendor id (with `:upstream_model` when one vendor serves it twice). */
  deployment?: string;
  vendor?: string;
  state?: string;
  failures?: number;
  latency_ms?: number | null;
  consecutive_failures?: number;
  last_failure_at?: string | null;
  last_error?: string | null;
}

/** Dollars: cents from $1 up, else three significant digits (a request often costs a fraction of a cent). */
export const usd = (n: number) => `$${n === 0 || Math.abs(n) >= 1 ? n.toFixed(2) : String(Number(n.toPrecision(3)))}`;
export const int = (n: number) => n.toLocaleString("en-US");
