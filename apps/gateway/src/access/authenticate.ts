import { GatewayError } from "@turnpike/providers";
import type { KeyRecord } from "../storage/store";
import type { RequestContext } from "../request/context";
import { HEADER } from "../http/headers";
import { effectiveKeyOf, teamDirectory } from "../teams/team-directory";
import type { AuthFailureStore } from "../keys/auth-failures";
import type { KeyService } from "../keys/key-service";
import type { Store } from "../storage/store";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface AuthenticateDeps {
  authFailures: AuthFailureStore;
  keys: KeyService;
  store: Store;
  now: () => number;
}

/** The presented secret: `x-api-key` (or the generateContent format's `x-goog-api-key`), else `Authorization: Bearer …`. */
export function presentedKey(headers: Headers): string | undefined {
  const x = headers.get("x-api-key") ?? headers.get("x-goog-api-key");
  if (x) return x.trim();
  const auth = headers.get("authorization");
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, "").trim();
  return undefined;
}

const AUTH_MESSAGES = {
  missing: "Missing API key: send it as `x-api-key: sk-…` or `Authorization: Bearer sk-…`.",
  unknown: "Invalid API key: it is not a Turnpike key.",
  revoked: "This API key was revoked.",
  expired: "This API key has expired.",
} as const;

/** A 401; each format renders it with its own type (and the chat format's `invalid_api_key` code). */
export function unauthorized(message: string): GatewayError {
  return new GatewayError({ status: 401, type: "authentication_error", message });
}

/** The 429 of an address locked out after too many failed attempts. */
export function tooManyFailures(wait: number): GatewayError {
  return new GatewayError({
    status: 429,
    type: "requests",
    code: "too_many_failed_auth",
    message: `Too many failed authentication attempts from this address; retry after ${wait} s.`,
    headers: { [HEADER.retryAfter]: String(wait) },
  });
}

/**
 * {@link authenticate} at once where it can be (a live key held in memory, of no team or of a
 * team held fresh: most requests), without an async frame; every other case (a refusal, a team
 * to read, a rotated-out secret in its grace period, a directory that must wait) goes through
 * {@link authenticate}.
 */
export function authenticateNow(
  deps: AuthenticateDeps,
  ctx: Pick<RequestContext, "request" | "address">,
): KeyRecord | Promise<KeyRecord> {
  const secret = presentedKey(ctx.request.headers);
  const key = secret?.startsWith("sk-") ? deps.keys.liveKeyNow(secret) : undefined;
  if (!key) return authenticate(deps, ctx);
  if (!key.team_id) return key;
  // A team held fresh in memory: the key as its team makes it, at once (made once per key and team).
  const held = teamDirectory(deps.store, deps.now).getNow(key.team_id);
  return held ? effectiveKeyOf(key, held.team) : authenticate(deps, ctx);
}

/**
 * Step 1: the live key behind the request, or a 401. A valid key always passes: a lock-out
 * after too many failures from one address (a 429 in place of the 401) refuses only the
 * failures, so a key shared behind one NAT or proxy is never locked out by someone else's
 * guessing. Keys are looked up by hash, so checking first costs a guesser nothing extra.
 */
export async function authenticate(
  deps: AuthenticateDeps,
  ctx: Pick<RequestContext, "request" | "address">,
): Promise<KeyRecord> {
  const secret = presentedKey(ctx.request.headers);
  const result = !secret
    ? ({ ok: false, reason: "missing" } as const)
    : secret.startsWith("sk-")
      ? await deps.keys.authenticate(secret)
      : ({ ok: false, reason: "unknown" } as const);
  if (result.ok)
    return result.key.team_id
      ? effectiveKeyOf(result.key, await teamDirectory(deps.store, deps.now).get(result.key.team_id))
      : result.key;
  const address = ctx.address();
  const wait = await deps.authFailures.blockedFor(address);
  if (wait > 0) throw tooManyFailures(wait);
  await deps.authFailures.fail(address);
  throw unauthorized(AUTH_MESSAGES[result.reason]);
}
