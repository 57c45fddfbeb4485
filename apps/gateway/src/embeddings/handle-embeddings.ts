import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import { sameTypeForStatus, withoutKey } from "../dispatch/execute";
import { resolve } from "../dispatch/resolve";
import { FORMATS } from "../formats";
import type { Connection } from "../http/client-address";
import { readJsonBody } from "../http/read-body";
import { errorResponse, toGatewayError } from "../http/respond";
import { authenticate } from "../keys/authenticate";
import { admit, type Admitted } from "../limits/admit";
import { newContext, type RequestContext } from "../pipeline/context";
import { emit } from "../pipeline/events";
import type { InternalCall } from "../pipeline/inference";
import { PROTOCOLS, type Target } from "../protocols";
import type { KeyRecord, UsageRecord } from "../storage/store";
import { invalid } from "../vocabulary/client-errors";
import { EMBEDDINGS_PROTOCOLS } from "./embeddings-protocols";
import { readEmbeddingsRequest, type EmbeddingsRequest } from "./embeddings-request";
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
  if (!EMBEDDINGS_PROTOCOLS[target.entry.protocol])
    throw invalid(
      `\`${target.entry.id}\` is served by the ${target.entry.protocol} protocol, which has no embeddings call.`,
      "model",
    );
  return target;
}

/**
 * One upstream embeddings call: sent with the client's going away as its abort, its error read
 * in the protocol's envelope, its reply read into vectors and rendered in the chat family's shape.
 */
export async function callEmbeddings(
  deps: GatewayDeps,
  ctx: RequestContext,
  target: Target,
  req: EmbeddingsRequest,
  signal: AbortSignal,
): Promise<EmbeddingsOutcome> {
  const protocol = EMBEDDINGS_PROTOCOLS[target.entry.protocol];
  if (!protocol)
    return {
      kind: "error",
      upstreamStatus: 0,
      error: invalid(`\`${target.entry.id}\` has no embeddings call.`, "model"),
    };
  const sent = protocol.request(target, req);
  emit(deps.hooks, "onAttempt", ctx, target, 1, undefined);
  let response: Response;
  try {
    response = await deps.fetch(sent.url, { method: "POST", headers: sent.headers, body: sent.body, signal });
  } catch (e) {
    if (signal.aborted) return { kind: "gone" };
    emit(deps.hooks, "onUpstreamResponse", ctx, 0, performance.now() - ctx.started);
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
  let text: string;
  try {
    text = await response.text();
  } catch (e) {
    if (signal.aborted) return { kind: "gone" };
    return {
      kind: "error",
      upstreamStatus: response.status,
      error: new GatewayError({
        status: 502,
        message: `The ${target.upstream.vendor} upstream's reply could not be read: ${e instanceof Error ? e.message : String(e)}`,
      }),
    };
  }
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

/** What the ledger needs of an ended embeddings call. */
export interface EmbeddingsEnding {
  requestId: string;
  key: KeyRecord;
  target: Target;
  inputTokens: number;
  /** Turnpike's own count, not the upstream's. */
  estimated: boolean;
  status: number;
  upstreamStatus: number;
  aborted: boolean;
  /** When it started (`performance.now()`), for the latency. */
  started: number;
  /** A line of a batch (billed at the model's batch price where there is one). */
  costFactor?: number;
}

/** The usage record of one embeddings call: input tokens only, priced at the model's input price. */
export function embeddingsRecord(deps: Pick<GatewayDeps, "catalog" | "now">, e: EmbeddingsEnding): UsageRecord {
  const { entry } = e.target;
  const cost = deps.catalog.cost(entry, {
    input_tokens: e.inputTokens,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  });
  return {
    request_id: e.requestId,
    key_id: e.key.id,
    model: entry.id,
    endpoint: "embeddings",
    stream: false,
    input_tokens: e.inputTokens,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: Math.round(cost * (e.costFactor ?? 1) * 1e9) / 1e9,
    upstream_model: entry.upstream_model,
    status: e.status,
    upstream_status: e.upstreamStatus,
    latency_ms: Math.round((performance.now() - e.started) * 100) / 100,
    aborted: e.aborted,
    estimated: e.estimated,
    created_at: new Date(deps.now()).toISOString(),
  };
}

/**
 * `POST /v1/embeddings`, top to bottom: authenticate → read and check the body → resolve an
 * embedding model → admit (budget, key and model limits) → call the upstream's embeddings →
 * meter (input tokens, `endpoint: "embeddings"`). Errors are in the chat family's envelope.
 */
export async function handleEmbeddings(
  deps: GatewayDeps,
  request: Request,
  server?: Connection | null,
  internal?: InternalCall,
): Promise<Response> {
  const ctx = newContext(request, FORMATS.chat, server, deps.config.trustedProxies);
  emit(deps.hooks, "onStart", ctx);
  let model: string | undefined;
  let admitted: Admitted | undefined;
  const refusal = () => ({ logger: deps.logger, request, requestId: ctx.id, model });
  try {
    const key = internal?.key ?? (await authenticate(deps, ctx));
    emit(deps.hooks, "onAuthenticated", ctx, key.id);
    const { value, size } = await readJsonBody(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
    if (typeof value.model === "string") model = value.model;
    const req = readEmbeddingsRequest(value);
    const target = embeddingsTarget(deps, key, req);
    admitted = await admit(deps, ctx, key, target.entry, size);
    const outcome = await callEmbeddings(deps, ctx, target, req, request.signal);
    const admittedNow = admitted;
    const finish = async (
      status: number,
      upstreamStatus: number,
      inputTokens: number,
      estimated: boolean,
      aborted = false,
    ) => {
      const record = embeddingsRecord(deps, {
        requestId: ctx.id,
        key,
        target,
        inputTokens,
        estimated,
        status,
        upstreamStatus,
        aborted,
        started: ctx.started,
        ...(internal ? { costFactor: internal.costFactor } : {}),
      });
      admittedNow.settle(record.input_tokens);
      void deps.spend
        .add(key.id, record.cost_usd)
        .catch((e) => deps.logger.error("spend update failed", { request_id: record.request_id }, e));
      emit(deps.hooks, "onFinish", ctx, status, record, undefined);
      await deps.ledger.record(record);
    };
    switch (outcome.kind) {
      case "gone":
        await finish(499, 0, 0, false, true);
        return new Response(null, { status: 499 });
      case "error": {
        // Refused or failed upstream: recorded, billed nothing.
        await finish(ctx.format.renderError(outcome.error, ctx.id).status, outcome.upstreamStatus, 0, false);
        return errorResponse(ctx.format, outcome.error, refusal());
      }
      case "reply": {
        await finish(200, 200, outcome.inputTokens, outcome.estimated);
        return Response.json(outcome.body, { headers: { ...ctx.format.idHeaders(ctx.id), ...admitted.limitHeaders } });
      }
      default: {
        const never: never = outcome;
        return never;
      }
    }
  } catch (e) {
    admitted?.settle(0);
    const err = toGatewayError(e, deps.logger, ctx.id);
    emit(deps.hooks, "onFinish", ctx, err.status, undefined);
    return errorResponse(ctx.format, err, refusal());
  }
}
