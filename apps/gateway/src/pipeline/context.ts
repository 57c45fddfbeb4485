import type { ClientFormat } from "../formats";
import { clientAddress, type Connection, type TrustedProxies } from "../http/client-address";
import { newRequestId } from "../http/request-id";

/**
 * What every step of a request knows from the start: its id, its clock, its format and its
 * connection. The steps add their findings as plain return values, not by writing here.
 */
export interface RequestContext {
  readonly id: string;
  /** `performance.now()` at arrival. */
  readonly started: number;
  readonly request: Request;
  readonly format: ClientFormat;
  readonly server: Connection | null | undefined;
  /** The peer's address (looked up only when needed). */
  address(): string;
}

export function newContext(
  request: Request,
  format: ClientFormat,
  server: Connection | null | undefined,
  proxies?: TrustedProxies,
): RequestContext {
  return {
    id: newRequestId(),
    started: performance.now(),
    request,
    format,
    server,
    address: () => clientAddress(server, request, proxies),
  };
}
