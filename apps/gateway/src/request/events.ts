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

/** One event's fan-out: each subscriber's method in turn, a throwing one skipped. */
type Call<E extends Event> = (...args: Parameters<NonNullable<PipelineHooks[E]>>) => void;

/**
 * Each event's fan-out over one hook set, made once per set (issue 47): an event no subscriber
 * implements has none, so its emitting site makes no call at all and works out none of its
 * arguments (`fanout(hooks).onFirstToken?.(ctx, performance.now() - ctx.started)`).
 */
export type Fanout = { readonly [E in Event]?: Call<E> };

type Method = (this: PipelineHooks, a: unknown, b: unknown, c: unknown, d: unknown) => void;
type Loose = (a?: unknown, b?: unknown, c?: unknown, d?: unknown) => void;

/** The subscribers of `event`, as one function (undefined: none). Arguments passed as they are, no rest array. */
function compileEvent(hooks: readonly PipelineHooks[], event: Event): Loose | undefined {
  const subs: { h: PipelineHooks; fn: Method }[] = [];
  for (const h of hooks) {
    const fn = h[event] as Method | undefined;
    if (typeof fn === "function") subs.push({ h, fn });
  }
  if (subs.length === 0) return undefined;
  if (subs.length === 1) {
    const { h, fn } = subs[0]!;
    return (a, b, c, d) => {
      try {
        fn.call(h, a, b, c, d);
      } catch {
        // A subscriber's failure is its own; the request is not failed for it.
      }
    };
  }
  return (a, b, c, d) => {
    for (let i = 0; i < subs.length; i++) {
      const s = subs[i]!;
      try {
        s.fn.call(s.h, a, b, c, d);
      } catch {
        // As above: the next subscriber is still told.
      }
    }
  };
}

/** Every event, as a table: the compiler proves a new event is compiled too. */
const EVENTS: Record<Event, true> = {
  onOperation: true,
  onStart: true,
  onAuthenticated: true,
  onAttempt: true,
  onUpstreamResponse: true,
  onStreamStart: true,
  onFirstToken: true,
  onFinish: true,
  onRefused: true,
};

function compileFanout(hooks: readonly PipelineHooks[]): Fanout {
  const out: Record<string, Loose> = {};
  // The table's keys are exactly the events.
  for (const e of Object.keys(EVENTS) as Event[]) {
    const call = compileEvent(hooks, e);
    if (call) out[e] = call;
  }
  return out as Fanout; // each event's function takes that event's arguments (compileEvent passes them on as they are)
}

const compiled = new WeakMap<readonly PipelineHooks[], Fanout>();
/** The set asked last and its fan-out: a gateway has one hook set, so this is one comparison a call. */
let lastHooks: readonly PipelineHooks[] | undefined;
let lastFanout: Fanout = {};

/**
 * The fan-out of a hook set, compiled the first time the set is seen. A hook set is fixed once a
 * gateway uses it (boot.ts freezes it): the set is the key, its subscribers are read once.
 */
export function fanout(hooks: readonly PipelineHooks[]): Fanout {
  if (hooks === lastHooks) return lastFanout;
  let f = compiled.get(hooks);
  if (!f) {
    f = compileFanout(hooks);
    compiled.set(hooks, f);
  }
  lastHooks = hooks;
  lastFanout = f;
  return f;
}

/**
 * Calls each subscriber of `event`; a throwing subscriber does not stop the request. The hot
 * path calls {@link fanout}'s function itself (no call at all when nobody listens); this is the
 * same for the paths that emit rarely.
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
  const call = fanout(hooks)[event] as Loose | undefined; // the event's own fan-out, given its own arguments
  if (call) call(a, b, c, d);
}
