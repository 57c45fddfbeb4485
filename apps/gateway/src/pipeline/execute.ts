import { GatewayError, messagesErrorTypeForStatus } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { UpstreamRequest } from "../protocols";
import type { RequestContext } from "./context";
import { emit } from "./events";
import type { Plan } from "./plan";

/** How the upstream call went, as plain data. */
export type Outcome =
  | { kind: "reply"; response: Response; status: number; inputTokens: number | undefined }
  | { kind: "error"; error: GatewayError; status: number }
  | { kind: "gone" };

/**
 * Step 6: the one place that calls an upstream. A client that goes away aborts the upstream at
 * once: the client request's own signal is the upstream call's (and a cancelled stream cancels
 * the upstream body). An upstream error reply is read and parsed here, before any byte has gone
 * to the client; this is where retries and fallbacks will decide.
 */
export async function execute(deps: GatewayDeps, ctx: RequestContext, plan: Plan): Promise<Outcome> {
  const signal = ctx.request.signal;
  const req = await plan.protocol.buildRequest(plan.target, plan.body, { stream: plan.stream, clientHeaders: ctx.request.headers });
  emit(deps.hooks, "onAttempt", ctx, plan.target, 1);
  // A messages-format client reads the input count in `message_start`, before the reply: where
  // the upstream can count, ask it alongside the call itself.
  const countReq = plan.countAlongside && plan.protocol.count ? await plan.protocol.count(plan.target, plan.body, ctx.request.headers) : undefined;
  const counting = countReq ? countAlongside(deps, plan, countReq, signal) : undefined;
  let response: Response;
  try {
    response = await deps.fetch(req.url, { method: "POST", headers: req.headers, body: req.body, signal });
  } catch (e) {
    if (signal.aborted) return { kind: "gone" };
    deps.logger.warn("upstream unreachable", { request_id: ctx.id, vendor: plan.target.upstream.vendor, reason: (e instanceof Error ? e.message : String(e)) });
    return { kind: "error", status: 0, error: new GatewayError({ status: 502, message: `Could not reach the ${plan.target.upstream.vendor} upstream: ${(e instanceof Error ? e.message : String(e))}` }) };
  }
  emit(deps.hooks, "onUpstreamResponse", ctx, response.status, performance.now() - ctx.started);
  if (!response.ok) {
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      if (signal.aborted) return { kind: "gone" };
      text = `(the error body could not be read: ${e instanceof Error ? e.message : String(e)})`;
    }
    return { kind: "error", status: response.status, error: sameTypeForStatus(plan.protocol.parseError(response.status, text, response.headers)) };
  }
  return { kind: "reply", response, status: response.status, inputTokens: counting ? await counting : undefined };
}

/** The upstream's own count of the prompt, or undefined if it could not say. */
async function countAlongside(deps: GatewayDeps, plan: Plan, req: UpstreamRequest, signal: AbortSignal): Promise<number | undefined> {
  try {
    const res = await deps.fetch(req.url, { method: "POST", headers: req.headers, body: req.body, signal });
    if (!res.ok) return undefined;
    const n = plan.protocol.readCount(await res.json());
    return n !== undefined && n > 0 ? n : undefined;
  } catch {
    return undefined; // the local count stands
  }
}

/**
 * One vendor status, one error type, whatever the vendor: the type follows the status the
 * protocol's parser mapped it to (a 503 is "overloaded" from every vendor), except a spent quota,
 * which keeps its own type and code (docs/protocols.md §4.8).
 */
export function sameTypeForStatus(err: GatewayError): GatewayError {
  if (err.code === "insufficient_quota") return err;
  const type = messagesErrorTypeForStatus(err.status);
  if (type === err.type) return err;
  return new GatewayError({
    status: err.status,
    type,
    message: err.message,
    ...(err.code !== undefined ? { code: err.code } : {}),
    ...(err.param !== undefined ? { param: err.param } : {}),
    ...(err.headers !== undefined ? { headers: err.headers } : {}),
  });
}
