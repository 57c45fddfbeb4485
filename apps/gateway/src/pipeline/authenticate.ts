import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { KeyRecord } from "../storage/store";
import type { Dialect } from "./dialect";

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

export function unauthorized(dialect: Dialect, message: string): GatewayError {
  return dialect === "messages"
    ? new GatewayError({ status: 401, type: "authentication_error", message })
    : new GatewayError({ status: 401, type: "invalid_request_error", code: "invalid_api_key", message });
}

/**
 * The live key behind the request, or a 401 in the caller's dialect. An address with too many
 * failed attempts in the last minute gets a 429 before its key is looked at.
 */
export function authenticate(deps: GatewayDeps, headers: Headers, dialect: Dialect, address: () => string): KeyRecord {
  // The peer address is looked up only when some address has failed lately.
  const wait = deps.authGuard.active ? deps.authGuard.blockedFor(address()) : 0;
  if (wait > 0) {
    throw new GatewayError({
      status: 429,
      type: dialect === "messages" ? "rate_limit_error" : "requests",
      code: "too_many_failed_auth",
      message: `Too many failed authentication attempts from this address; retry after ${wait} s.`,
      headers: { "retry-after": String(wait) },
    });
  }
  const secret = presentedKey(headers);
  if (!secret) {
    deps.authGuard.fail(address());
    throw unauthorized(dialect, AUTH_MESSAGES.missing);
  }
  const result = secret.startsWith("sk-") ? deps.keys.authenticate(secret) : ({ ok: false, reason: "unknown" } as const);
  if (result.ok) return result.key;
  deps.authGuard.fail(address());
  throw unauthorized(dialect, AUTH_MESSAGES[result.reason]);
}
