import type { GatewayError } from "@turnpike/providers";
import type { Target } from "../protocols";
import type { UsageRecord } from "../storage/store";
import type { Endpoint } from "../vocabulary/format";
import type { RequestContext } from "./context";

/**
 * The pipeline's lifecycle, told to subscribers (logging, metrics, tracing) given in the
 * dependencies: the steps emit, they never call a subscriber's code directly. A subscriber
 * must not throw; one that does is skipped for that event and the request goes on.
 */
/**
 * An operation served beside the inference pipeline (an MCP request: a call, a read, a get or a
 * list), told once when it ended, after its admission and its ledger row: the subscribers give it
 * the same span and request line as a pipeline request.
 */
export interface FinishedOperation {
  requestId: string;
  keyId: string;
  endpoint: Endpoint;
  /** What was done, from a fixed set (for MCP: its JSON-RPC method, e.g. `tools/call`). */
  method: string;
  /** The ledger's `model` of the operation (a namespaced tool or prompt, or the method). */
  name: string;
  /** The upstream that served it, when one did (an MCP server). */
  server: string | undefined;
  /** The ledger's status. */
  status: number;
  /** Epoch ms. */
  startedAt: number;
  endedAt: number;
  /** The request's headers (a W3C `traceparent` joins the caller's trace). */
  headers: Headers | undefined;
}

export interface PipelineHooks {
  /** An operation outside the pipeline ended (told once, with its outcome). */
  onOperation?(op: FinishedOperation): void;
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
