import { teamStoreOf } from "../teams/team-store";
import { GatewayError } from "@turnpike/providers";
import { FORMATS } from "../formats";
import { clientAddress, type Connection } from "../http/client-address";
import { newRequestId } from "../http/request-id";
import { errorResponse, toGatewayError } from "../request/respond";
import type { Handler, RouteCall } from "../http/route";
import { tooManyFailures } from "./authenticate";
import { type AuditEntry, recordAudit } from "../teams/audit";
import { bearerPrincipal } from "./principal";
import type { Principal } from "../teams/roles";
import type { AuthFailureStore } from "../keys/auth-failures";
import type { LimiterStore } from "../limits/limiter-store";
import type { Logger } from "../log/logger";
import type { Store } from "../storage/store";
import type { TrustedProxies } from "../http/client-address";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface AdminGuardDeps {
  /** Bearer secret of the admin API. */
  adminKey: string;
  authFailures: AuthFailureStore;
  config: {
    adminKeyPrevious?: { key: string; until: string };
    adminWritesPerMinute: number;
    trustedProxies: TrustedProxies;
  };
  limiter: LimiterStore;
  logger: Logger;
  now: () => number;
  store: Store;
}

/** One admin call: who makes it, and how its write is put in the audit log. */
export interface AdminCall extends RouteCall {
  who: Principal;
  /** Appends the write to the audit log (a failure to write is logged, never undoes the write). */
  audit(e: AuditEntry): Promise<void>;
}

/** A session's principal from the request (the dashboard's sign-on), if one is set up. */
export type SessionPrincipal = (request: Request) => Promise<Principal | undefined>;

/**
 * The caller (the admin key, a named admin token, a signed-in session), or a 401. Failures are
 * counted per client address in their own counters (an inference key's failures never lock out
 * the admin API, nor the other way round); a locked-out address gets a 429 for anything but a
 * right secret.
 */
async function checkAdmin(
  deps: AdminGuardDeps,
  request: Request,
  server: Connection | null | undefined,
  session?: SessionPrincipal,
): Promise<Principal> {
  const auth = request.headers.get("authorization") ?? "";
  const principal = auth
    ? await bearerPrincipal(
        auth.replace(/^bearer\s+/i, ""),
        deps.adminKey,
        teamStoreOf(deps.store),
        deps.now(),
        deps.config.adminKeyPrevious,
      )
    : await session?.(request);
  if (principal) return principal;
  const address = `admin|${clientAddress(server, request, deps.config.trustedProxies)}`;
  const wait = await deps.authFailures.blockedFor(address);
  if (wait > 0) throw tooManyFailures(wait);
  await deps.authFailures.fail(address);
  throw new GatewayError({
    status: 401,
    type: "authentication_error",
    message: "Admin API: send `Authorization: Bearer $TURNPIKE_ADMIN_KEY`, a named admin token, or sign in.",
  });
}

/** Methods that write nothing: not counted against the write limit. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Admin writes per principal and minute (`TURNPIKE_ADMIN_WRITES_PER_MINUTE`), in the limiter
 * every instance shares: one member cannot flood the audit log nor the key table. A 429 in the
 * admin API's error format, with `Retry-After`.
 */
async function admitWrite(deps: AdminGuardDeps, who: Principal): Promise<void> {
  const rpm = deps.config.adminWritesPerMinute;
  const [a] = await deps.limiter.admit([{ bucket: `admin-writes|${who.actor}`, limits: { rpm, tpm: null } }], 0);
  if (!a || a.ok) return;
  const wait = Math.max(1, a.retryAfterS);
  throw new GatewayError({
    status: 429,
    type: "requests",
    code: "admin_write_limit",
    message: `Too many admin writes by ${who.actor}: at most ${rpm} a minute (TURNPIKE_ADMIN_WRITES_PER_MINUTE); retry after ${wait} s.`,
    headers: { "retry-after": String(wait) },
  });
}

/** Wraps an admin handler: the caller checked first; what it throws is answered in the chat format's envelope. */
export function adminGuard(deps: AdminGuardDeps, session?: SessionPrincipal) {
  return (fn: (call: AdminCall) => Promise<Response> | Response): Handler =>
    async (call) => {
      const requestId = newRequestId();
      try {
        const who = await checkAdmin(deps, call.request, call.server, session);
        if (!READS.has(call.request.method)) await admitWrite(deps, who);
        const address = clientAddress(call.server, call.request, deps.config.trustedProxies);
        const audit = (e: AuditEntry) =>
          recordAudit(teamStoreOf(deps.store), who, address, e, deps.now()).catch((err) =>
            deps.logger.error("audit write failed", { action: e.action }, err),
          );
        return await fn({ ...call, who, audit });
      } catch (e) {
        return errorResponse(FORMATS.chat, toGatewayError(e, deps.logger, requestId), {
          logger: deps.logger,
          request: call.request,
          requestId,
        });
      }
    };
}
