import type { GatewayError } from "@turnpike/providers";
import type { Target } from "../protocols";
import type { UsageRecord } from "../storage/store";
import type { RequestContext } from "./context";

/**
 * The pipeline's lifecycle, told to subscribers (logging, metrics, tracing) given in the
 * dependencies: the steps emit, they never call a subscriber's code directly. A subscriber
 * must not throw; one that does is skipped for that event and the request goes on.
 */
export interface PipelineHooks {
  /** A request arrived (before authentication). */
  onStart?(ctx: RequestContext): void;
  /** The request's key was accepted: its id (never its secret). */
  onAuthenticated?(ctx: RequestContext, keyId: string): void;
  /** An upstream call is about to be made: its number within the request (from 1), and the deployment. */
  onAttempt?(ctx: RequestContext, target: Target, attempt: number, deployment?: string): void;
  /** The upstream answered: its status, and when (ms since the request arrived). */
  onUpstreamResponse?(ctx: RequestContext, status: number, ms: number): void;
  /** A streamed reply began to flow to the client (it is open until onFinish). */
  onStreamStart?(ctx: RequestContext): void;
  /** The first piece of a streamed reply went to the client (ms since the request arrived). */
  onFirstToken?(ctx: RequestContext, ms: number): void;
  /**
   * The request ended: the status the client saw, its usage record if it reached an upstream,
   * and why the reply ended (read on call: a passthrough works it out only if asked).
   */
  onFinish?(
    ctx: RequestContext,
    status: number,
    record: UsageRecord | undefined,
    finishReason?: () => string | undefined,
  ): void;
  /**
   * The request ended in an error and has no usage record — refused before any upstream call
   * (bad input, no key, unknown model, a limit) or a token count the upstream failed: the error
   * the client gets. Told just before its onFinish.
   */
  onRefused?(ctx: RequestContext, error: GatewayError): void;
}

type Event = keyof PipelineHooks;

/**
 * Calls each subscriber of `event`; a throwing subscriber does not stop the request. The
 * arguments are passed as they are (no rest array, no `apply`): this runs several times a request.
 */
export function emit<E extends Event>(
  hooks: readonly PipelineHooks[],
  event: E,
  ...args: Parameters<NonNullable<PipelineHooks[E]>>
): void;
export function emit(
  hooks: readonly PipelineHooks[],
  event: Event,
  a?: unknown,
  b?: unknown,
  c?: unknown,
  d?: unknown,
): void {
  for (let i = 0; i < hooks.length; i++) {
    const h = hooks[i]!;
    const fn = h[event] as ((this: PipelineHooks, a: unknown, b: unknown, c: unknown, d: unknown) => void) | undefined;
    if (!fn) continue;
    try {
      fn.call(h, a, b, c, d);
    } catch {
      // A subscriber's failure is its own; the request is not failed for it.
    }
  }
}
