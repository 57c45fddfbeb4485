import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { sameTypeForStatus, timeoutError, withoutKey } from "../dispatch/execute";
import { resolve } from "../dispatch/resolve";
import type { RequestContext } from "../request/context";
import { emit } from "../request/events";
import { PROTOCOLS, type Target } from "../protocols";
import type { KeyRecord } from "../storage/store";
import { invalid } from "../vocabulary/client-errors";
import type { EmbeddingsRequest } from "./embeddings-request";
import { base64Vector } from "./vectors";

/** What one embeddings call came to: its vectors and input tokens, or the error the client gets. */
export type EmbeddingsOutcome =
  | { kind: "reply"; body: Record<string, unknown>; inputTokens: number; estimated: boolean }
  | { kind: "error"; error: GatewayError; upstreamStatus: number }
  | { kind: "gone" };

/** The input tokens of the inputs as Turnpike counts them: token ids count one each. */
function countInputs(deps: Pick<GatewayDeps, "countText">, req: EmbeddingsRequest): number {
  let n = 0;
  for (const input of req.inputs) n += typeof input === "string" ? deps.countText(input) : input.length;
  return n;
}

/**
 * The checks an embeddings call passes before any upstream call: the model is an embedding
 * model the key may call, its protocol has embeddings, and the size asked is one it makes.
 */
export function embeddingsTarget(
  deps: Pick<GatewayDeps, "catalog" | "keys" | "upstreams">,
  key: KeyRecord,
  req: EmbeddingsRequest,
): Target {
  const target = resolve(deps, key, req.model, "embeddings");
  const most = target.entry.embedding_dimensions ?? 0;
  if (req.dimensions !== undefined && req.dimensions > most) {
    throw invalid(
      `\`dimensions\` is ${req.dimensions}, but \`${target.entry.id}\` makes vectors of at most ${most}.`,
      "dimensions",
    );
  }
  if (!PROTOCOLS[target.entry.protocol].embeddings)
    throw invalid(
      `\`${target.entry.id}\` is served by the ${target.entry.protocol} protocol, which has no embeddings call.`,
      "model",
    );
  return target;
}

/** One attempt's place and deadlines (the route's `timeouts`). */
export interface EmbeddingsAttempt {
  /** This attempt's number within the request, from 1. */
  n: number;
  deployment: string;
  /** Until the upstream's status line and headers. */
  connectMs: number;
  /** Until the whole body has come (an embeddings reply is one JSON document). */
  firstByteMs: number;
}

/**
 * One upstream embeddings call: sent with the client's going away (and the attempt's deadlines)
 * as its abort, its error read in the protocol's envelope, its reply read into vectors and
 * rendered in the chat family's shape. Throws a 400 for an input the protocol cannot take.
 */
export async function callEmbeddings(
  deps: GatewayDeps,
  ctx: RequestContext,
  target: Target,
  req: EmbeddingsRequest,
  signal: AbortSignal,
  attempt?: EmbeddingsAttempt,
): Promise<EmbeddingsOutcome> {
  const protocol = PROTOCOLS[target.entry.protocol].embeddings;
  if (!protocol)
    return {
      kind: "error",
      upstreamStatus: 0,
      error: invalid(`\`${target.entry.id}\` has no embeddings call.`, "model"),
    };
  const sent = protocol.request(target, req);
  emit(deps.hooks, "onAttempt", ctx, target, attempt?.n ?? 1, attempt?.deployment);
  // The call's own abort: pulled by the client's going away, or by a deadline that passed.
  const own = new AbortController();
  const leave = () => own.abort();
  if (signal.aborted) own.abort();
  else signal.addEventListener("abort", leave, { once: true });
  let late: { what: string; ms: number } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = (what: string, ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      late = { what, ms };
      own.abort();
    }, ms);
  };
  const timedOut = (status: number): EmbeddingsOutcome | undefined =>
    late && !signal.aborted
      ? { kind: "error", upstreamStatus: status, error: timeoutError(target.upstream.vendor, late.what, late.ms) }
      : undefined;
  try {
    if (attempt) deadline("answer", attempt.connectMs);
    let response: Response;
    try {
      response = await deps.fetch(sent.url, {
        method: "POST",
        headers: sent.headers,
        body: sent.body,
        signal: own.signal,
      });
    } catch (e) {
      if (signal.aborted) return { kind: "gone" };
      emit(deps.hooks, "onUpstreamResponse", ctx, 0, performance.now() - ctx.started);
      const timeout = timedOut(0);
      if (timeout) return timeout;
      const reason = e instanceof Error ? e.message : String(e);
      deps.logger.warn("upstream unreachable", { request_id: ctx.id, vendor: target.upstream.vendor, reason });
      return {
        kind: "error",
        upstreamStatus: 0,
        error: new GatewayError({
          status: 502,
          message: `Could not reach the ${target.upstream.vendor} upstream: ${reason}`,
        }),
      };
    }
    emit(deps.hooks, "onUpstreamResponse", ctx, response.status, performance.now() - ctx.started);
    if (attempt) deadline("send its reply", attempt.firstByteMs);
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      if (signal.aborted) return { kind: "gone" };
      // A body cut off is no answer: worth another deployment, as a reset is.
      return (
        timedOut(0) ?? {
          kind: "error",
          upstreamStatus: 0,
          error: new GatewayError({
            status: 502,
            message: `The ${target.upstream.vendor} upstream's reply could not be read: ${e instanceof Error ? e.message : String(e)}`,
          }),
        }
      );
    }
    return readReply(deps, ctx, target, req, response, text);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", leave);
  }
}

/** An upstream's answer, read whole: its error in the protocol's envelope, or its vectors. */
function readReply(
  deps: GatewayDeps,
  ctx: RequestContext,
  target: Target,
  req: EmbeddingsRequest,
  response: Response,
  text: string,
): EmbeddingsOutcome {
  const protocol = PROTOCOLS[target.entry.protocol].embeddings!; // checked by the caller
  if (!response.ok) {
    const error = sameTypeForStatus(
      PROTOCOLS[target.entry.protocol].parseError(
        response.status,
        withoutKey(text, target.upstream.apiKey),
        response.headers,
      ),
    );
    return { kind: "error", upstreamStatus: response.status, error };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const reply = protocol.read(json, req.inputs.length);
  if (!reply) {
    deps.logger.warn("embeddings reply not understood", {
      request_id: ctx.id,
      vendor: target.upstream.vendor,
      bytes: text.length,
    });
    return {
      kind: "error",
      upstreamStatus: response.status,
      error: new GatewayError({
        status: 502,
        message: `The ${target.upstream.vendor} upstream answered the embeddings call in a shape Turnpike does not read.`,
      }),
    };
  }
  const inputTokens = reply.inputTokens ?? countInputs(deps, req);
  const data = reply.vectors.map((v, index) => ({
    object: "embedding",
    index,
    embedding: req.encodingFormat === "base64" ? base64Vector(v) : v,
  }));
  return {
    kind: "reply",
    inputTokens,
    estimated: reply.inputTokens === undefined,
    body: {
      object: "list",
      data,
      model: target.entry.id,
      usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
    },
  };
}
