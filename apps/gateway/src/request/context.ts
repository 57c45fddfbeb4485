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

/** A request's context: a class, so that `address` is one shared method, not a closure made per request. */
class Context implements RequestContext {
  readonly id = newRequestId();
  readonly started = performance.now();

  constructor(
    readonly request: Request,
    readonly format: ClientFormat,
    readonly server: Connection | null | undefined,
    private readonly proxies: TrustedProxies | undefined,
  ) {}

  address(): string {
    return clientAddress(this.server, this.request, this.proxies);
  }
}

export function newContext(
  request: Request,
  format: ClientFormat,
  server: Connection | null | undefined,
  proxies?: TrustedProxies,
): RequestContext {
  return new Context(request, format, server, proxies);
}

/**
 * Whether the request's client has gone away: its connection closed, its fetch aborted, or (a
 * Responses WebSocket turn) its socket closed. The request's own `AbortSignal` is that signal on
 * every surface: Bun aborts a server request's signal when its connection closes (a `Request`
 * copied with `new Request(request, init)`, as the generateContent route does for `?key=`,
 * follows it), and a WebSocket turn's request carries a signal its socket's close aborts
 * (routes/responses-websocket.ts). Reading `aborted` costs nothing; a listener on a server
 * request's signal costs about 5 µs in Bun 1.4.4, so code that must act at once (the upstream
 * call) listens only once it waits (dispatch/execute.ts), and a step about to start new work —
 * another attempt, a continuation — asks this first.
 */
export function clientGone(ctx: Pick<RequestContext, "request">): boolean {
  return ctx.request.signal.aborted;
}
