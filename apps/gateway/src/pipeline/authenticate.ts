import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { KeyRecord } from "../state/store";
import type { RequestContext } from "./context";
import { HEADER } from "./headers";

/** The presented secret: `x-api-key`, else `Authorization: Bearer …`. */
export function presentedKey(headers: Headers): string | undefined {
  const x = headers.get("x-api-key");
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

/**
 * Step 1: the live key behind the request, or a 401. An address with too many failed attempts
 * in the last minute gets a 429 before its key is looked at.
 */
export async function authenticate(deps: GatewayDeps, ctx: Pick<RequestContext, "request" | "address">): Promise<KeyRecord> {
  // The peer address is looked up only when some address has failed lately.
  const wait = deps.authFailures.active ? await deps.authFailures.blockedFor(ctx.address()) : 0;
  if (wait > 0) {
    throw new GatewayError({
      status: 429,
      type: "requests",
      code: "too_many_failed_auth",
      message: `Too many failed authentication attempts from this address; retry after ${wait} s.`,
      headers: { [HEADER.retryAfter]: String(wait) },
    });
  }
  const secret = presentedKey(ctx.request.headers);
  if (!secret) {
    await deps.authFailures.fail(ctx.address());
    throw unauthorized(AUTH_MESSAGES.missing);
  }
  const result = secret.startsWith("sk-") ? await deps.keys.authenticate(secret) : ({ ok: false, reason: "unknown" } as const);
  if (result.ok) return result.key;
  await deps.authFailures.fail(ctx.address());
  throw unauthorized(AUTH_MESSAGES[result.reason]);
}
