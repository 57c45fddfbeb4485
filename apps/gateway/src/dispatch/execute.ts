import { GatewayError, messagesErrorTypeForStatus } from "@turnpike/providers";
import type { UpstreamRequest } from "../protocols";
import type { RequestContext } from "../request/context";
import { fanout } from "../request/events";
import type { Plan } from "./plan";
import type { PipelineHooks } from "../request/events";
import type { Logger } from "../log/logger";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface ExecuteDeps {
  fetch: typeof fetch;
  hooks: readonly PipelineHooks[];
  logger: Logger;
}

/** How the upstream call went, as plain data. */
export type Outcome =
  | { kind: "reply"; response: Response; status: number; inputTokens: number | undefined; watch?: Watch }
  | { kind: "error"; error: GatewayError; status: number; timedOut?: boolean }
  | { kind: "gone" };

/**
 * The upstream call's own abort, for the deadlines after its answer's head: the first byte of
 * the body and the silence between chunks (relay.ts, relay-stream.ts).
 */
export interface Watch {
  firstByteMs: number;
  idleMs: number;
  /** Aborts the upstream call: its body's reads fail, and the relay ends the reply as it must. */
  abort(reason: string): void;
  /**
   * From now on the client's going away aborts the call (at once if it is gone already). The
   * call follows the client by itself once its head is {@link LINK_AFTER_MS} late; a JSON body
   * that is as late is followed from then on too (relay.ts).
   */
  followClient(): void;
}

/** The deadlines of one attempt (undefined: none but the client's going away). */
export interface AttemptLimits {
  /** This attempt's number within the request, from 1 (told to `onAttempt`). */
  n: number;
  /** Until the upstream's status line and headers. */
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  /** The deployment's name, told to `onAttempt`. */
  deployment?: string;
}

/** How late an upstream's answer (or a JSON reply's body) may be before the client's going away is listened for (see execute). */
export const LINK_AFTER_MS = 20;

/** A deadline passed before the reply: a 504 `timeout` in every format. */
export function timeoutError(vendor: string, what: string, ms: number): GatewayError {
  return new GatewayError({
    status: 504,
    type: "timeout_error",
    code: "timeout",
    message: `The ${vendor} upstream did not ${what} within ${ms} ms.`,
  });
}

/**
 * Step 6: the one place that calls an upstream. A client that goes away aborts the upstream at
 * once: the client request's own signal is the upstream call's (and a cancelled stream cancels
 * the upstream body). An upstream error reply is read and parsed here, before any byte has gone
 * to the client; this is where retries and fallbacks will decide.
 */
export async function execute(
  deps: ExecuteDeps,
  ctx: RequestContext,
  plan: Plan,
  limits?: AttemptLimits,
): Promise<Outcome> {
  const client = ctx.request.signal;
  const req = await plan.protocol.buildRequest(plan.target, plan.body, {
    stream: plan.stream,
    clientHeaders: ctx.request.headers,
  });
  const on = fanout(deps.hooks);
  on.onAttempt?.(ctx, plan.target, limits?.n ?? 1, limits?.deployment);
  // With deadlines, the call has its own abort, which the client's going away also pulls; one
  // timer at a time runs until the answer's head. The client's signal is listened to only once the answer
  // is LINK_AFTER_MS late: in Bun 1.4.4 a listener on a server request's signal costs about 5 µs
  // per request (7 % of a JSON passthrough), and an answer that fast is in before a client could
  // matter.
  let signal = client;
  let own: OwnAbort | undefined;
  if (limits) {
    own = new OwnAbort(client, limits);
    signal = own.signal;
  }
  // A messages-format client reads the input count in `message_start`, before the reply: where
  // the upstream can count, ask it alongside the call itself.
  const countReq =
    plan.countAlongside && plan.protocol.count
      ? await plan.protocol.count(plan.target, plan.body, ctx.request.headers)
      : undefined;
  const counting = countReq ? countAlongside(deps, plan, countReq, signal) : undefined;
  let response: Response;
  try {
    const sent = deps.fetch(req.url, { method: "POST", headers: req.headers, body: req.body, signal });
    // The prompt's count the stream's first event needs, worked out while the upstream answers.
    if (plan.countFirst) plan.countPrompt();
    response = await sent;
  } catch (e) {
    own?.answered();
    // An attempt that got no answer is told too (status 0): each one counts as an upstream failure.
    if (!client.aborted) on.onUpstreamResponse?.(ctx, 0, performance.now() - ctx.started);
    if (own?.timedOut && !client.aborted)
      return {
        kind: "error",
        status: 0,
        timedOut: true,
        error: timeoutError(plan.target.upstream.vendor, "answer", limits!.connectMs),
      };
    if (signal.aborted) return { kind: "gone" };
    deps.logger.warn("upstream unreachable", {
      request_id: ctx.id,
      vendor: plan.target.upstream.vendor,
      reason: e instanceof Error ? e.message : String(e),
    });
    return {
      kind: "error",
      status: 0,
      error: new GatewayError({
        status: 502,
        message: `Could not reach the ${plan.target.upstream.vendor} upstream: ${e instanceof Error ? e.message : String(e)}`,
      }),
    };
  }
  own?.answered();
  on.onUpstreamResponse?.(ctx, response.status, performance.now() - ctx.started);
  if (!response.ok) {
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      if (signal.aborted) return { kind: "gone" };
      text = `(the error body could not be read: ${e instanceof Error ? e.message : String(e)})`;
    }
    // Some vendors quote the key they were sent in their errors: the client never sees Turnpike's.
    const error = sameTypeForStatus(
      plan.protocol.parseError(response.status, withoutKey(text, plan.target.upstream.apiKey), response.headers),
    );
    return {
      kind: "error",
      status: response.status,
      error: response.status === 429 || response.status >= 500 ? withLimitHeaders(error, response.headers) : error,
    };
  }
  const inputTokens = counting ? await counting : undefined;
  if (!own) return { kind: "reply", response, status: response.status, inputTokens };
  return { kind: "reply", response, status: response.status, inputTokens, watch: own };
}

/**
 * An attempt's own abort and its timers until the answer's head (see execute), and then its
 * {@link Watch}. One object per attempt: its timers are module functions given it as their
 * argument, so no closure is made per request.
 */
class OwnAbort implements Watch {
  private readonly ac = new AbortController();
  readonly signal = this.ac.signal;
  readonly firstByteMs: number;
  readonly idleMs: number;
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the client's going away starts to be listened for; the rest of connectMs runs after. */
  private readonly linkAfterMs: number;
  /** The client's going away is listened for (once the head, or a JSON body, was late). */
  private following = false;

  constructor(
    readonly client: AbortSignal,
    readonly limits: AttemptLimits,
  ) {
    this.firstByteMs = limits.firstByteMs;
    this.idleMs = limits.idleMs;
    if (client.aborted) this.ac.abort();
    // The first timer links the client, the second (what remains of connectMs) times out.
    this.linkAfterMs = Math.min(LINK_AFTER_MS, limits.connectMs);
    this.timer = setTimeout(linkClient, this.linkAfterMs, this);
  }

  /** The answer's head came (or the call failed): no more deadline until the relay's. */
  answered(): void {
    clearTimeout(this.timer);
  }

  /** The answer is late: the client's going away is listened for, and the connect deadline runs on. */
  link(): void {
    this.followClient();
    this.timer = setTimeout(timeOut, this.limits.connectMs - this.linkAfterMs, this);
  }

  followClient(): void {
    if (this.following) return;
    this.following = true;
    if (this.client.aborted) this.ac.abort();
    else this.client.addEventListener("abort", () => this.ac.abort(), { once: true });
  }

  timeOut(): void {
    this.timedOut = true;
    this.ac.abort();
  }

  abort(reason: string): void {
    this.ac.abort(new Error(reason));
  }
}

function linkClient(a: OwnAbort): void {
  a.link();
}

function timeOut(a: OwnAbort): void {
  a.timeOut();
}

/** `text` with every occurrence of the vendor key blanked (keys shorter than 8 are no real key). */
export function withoutKey(text: string, key: string): string {
  return key.length >= 8 && text.includes(key) ? text.replaceAll(key, "[redacted]") : text;
}

/** The upstream's own count of the prompt, or undefined if it could not say. */
async function countAlongside(
  deps: ExecuteDeps,
  plan: Plan,
  req: UpstreamRequest,
  signal: AbortSignal,
): Promise<number | undefined> {
  try {
    const res = await deps.fetch(req.url, { method: "POST", headers: req.headers, body: req.body, signal });
    if (!res.ok) return undefined;
    const n = plan.protocol.readCount(await res.json());
    return n !== undefined && n > 0 ? n : undefined;
  } catch {
    return undefined; // the local count stands
  }
}

/** The vendor's own rate-limit headers, kept on its error so that a client told to wait sees which limit ran out. */
function withLimitHeaders(err: GatewayError, headers: Headers): GatewayError {
  let limits: Record<string, string> | undefined;
  headers.forEach((v, k) => {
    if (k.startsWith("anthropic-ratelimit-") || k.startsWith("x-ratelimit-")) (limits ??= {})[k] = v;
  });
  return limits ? changed(err, err.type, { ...limits, ...err.headers }) : err;
}

/** The same error with another type or headers. */
function changed(err: GatewayError, type: string, headers: Record<string, string> | undefined): GatewayError {
  return new GatewayError({
    status: err.status,
    type,
    message: err.message,
    ...(err.code !== undefined ? { code: err.code } : {}),
    ...(err.param !== undefined ? { param: err.param } : {}),
    ...(headers !== undefined ? { headers } : {}),
  });
}

/**
 * One vendor status, one error type, whatever the vendor: the type follows the status the
 * protocol's parser mapped it to (a 503 is "overloaded" from every vendor), except a spent quota,
 * which keeps its own type and code (docs/protocols.md §4.8).
 */
export function sameTypeForStatus(err: GatewayError): GatewayError {
  if (err.code === "insufficient_quota") return err;
  const type = messagesErrorTypeForStatus(err.status);
  return type === err.type ? err : changed(err, type, err.headers);
}
