import { headerSafe } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { HEADER } from "../http/headers";
import { FORMATS } from "../formats";
import type { Connection } from "../http/client-address";
import { readJsonBody } from "../request/read-body";
import { errorResponse, toGatewayError } from "../request/respond";
import { authenticate } from "../access/authenticate";
import { admit, type Admitted } from "../limits/admit";
import { newContext } from "../request/context";
import { emit } from "../request/events";
import type { InternalCall } from "../pipeline/inference";
import type { Target } from "../protocols";
import type { KeyRecord, UsageRecord } from "../storage/store";
import { embeddingsTarget } from "./call-embeddings";
import { dispatchEmbeddings, type EmbeddingsDispatched } from "./embeddings-attempts";
import { readEmbeddingsRequest } from "./embeddings-request";
import { guardFor, redactInputs } from "../guardrails/surfaces";
import { guardrailNote, type GuardrailRun } from "../guardrails/run";
import { nanoDollars } from "../vocabulary/money";

/** The record's guardrail note, where a policy found something. */
function guardrailField(guard: GuardrailRun | undefined): { guardrail?: ReturnType<typeof guardrailNote> } {
  const found = guard?.summary();
  return found ? { guardrail: guardrailNote(found) } : {};
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
  /** Where it was served: the deployment, the attempts made and the catalog id asked for. */
  route?: { deployment: string; attempts: number; requested: string };
  /** The key's guardrails, whose findings the record notes (never a value). */
  guard?: GuardrailRun | undefined;
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
    cost_usd: nanoDollars(cost * (e.costFactor ?? 1)),
    upstream_model: entry.upstream_model,
    ...(e.route ? { deployment: e.route.deployment, attempts: e.route.attempts } : {}),
    // Present only when a fallback served: `model` is the one that served and was priced.
    ...(e.route && e.route.requested !== entry.id ? { requested_model: e.route.requested } : {}),
    ...guardrailField(e.guard),
    status: e.status,
    upstream_status: e.upstreamStatus,
    latency_ms: Math.round((performance.now() - e.started) * 100) / 100,
    aborted: e.aborted,
    estimated: e.estimated,
    created_at: new Date(deps.now()).toISOString(),
  };
}

/**
 * The headers of an embeddings reply (and of its error, once an upstream was tried), as the
 * inference routes give them (relay/relay.ts): the model and deployment that served, the
 * attempts made, the model asked for when a fallback served.
 */
function routeHeaders(sent: EmbeddingsDispatched): Record<string, string> {
  const { entry, upstream } = sent.target;
  return {
    [HEADER.model]: headerSafe(entry.id),
    [HEADER.deployment]: headerSafe(sent.deployment.name),
    [HEADER.attempts]: String(sent.attempts),
    [HEADER.upstream]: upstream.simulated ? "simulator" : upstream.vendor,
    [HEADER.upstreamModel]: headerSafe(entry.upstream_model),
    ...(sent.requested !== entry.id ? { [HEADER.fallbackFrom]: headerSafe(sent.requested) } : {}),
  };
}

/**
 * `POST /v1/embeddings`, top to bottom: authenticate → read and check the body → resolve an
 * embedding model → admit (budget, key and model limits) → dispatch over the model's deployments
 * and fallbacks (embeddings-attempts.ts) → meter (input tokens, `endpoint: "embeddings"`). Errors
 * are in the chat family's envelope.
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
  let guard: GuardrailRun | undefined;
  // Set while the guardrails read the inputs: a block leaves a record (the category, never the value).
  let blocked: { key: KeyRecord; target: Target } | undefined;
  const refusal = () => ({ logger: deps.logger, request, requestId: ctx.id, model });
  try {
    const key = internal?.key ?? (await authenticate(deps, ctx));
    emit(deps.hooks, "onAuthenticated", ctx, key.id);
    const { value, size } = await readJsonBody(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
    if (typeof value.model === "string") model = value.model;
    const read = readEmbeddingsRequest(value);
    const asked = embeddingsTarget(deps, key, read);
    // Its worst case (every character of the body a token) is held against the budgets until it
    // is settled; a batch line an upstream's batch API ran was admitted when it was sent.
    admitted =
      internal?.admitted ??
      (await admit(deps, ctx, key, asked.entry, size, { requestId: ctx.id, stream: false, embeddings: true }));
    // The key's guardrails read the inputs before they leave (docs/guardrails.md, "Embeddings").
    guard = guardFor(deps.config.guardrails, key, ctx.id);
    if (guard && internal?.hookAnswers) guard.adoptHookAnswers(internal.hookAnswers);
    if (guard) blocked = { key, target: asked };
    const req = guard ? { ...read, inputs: await redactInputs(guard, read.inputs) } : read;
    blocked = undefined;
    const sent = await dispatchEmbeddings(deps, ctx, req, asked, value, size);
    const { outcome, target } = sent;
    const admittedNow = admitted;
    const headers = { ...routeHeaders(sent), ...ctx.format.idHeaders(ctx.id), ...admitted.limitHeaders };
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
        route: { deployment: sent.deployment.name, attempts: sent.attempts, requested: sent.requested },
        ...(internal ? { costFactor: internal.costFactor } : {}),
        guard,
      });
      // The reservation is replaced by the cost, under the key and its team.
      admittedNow.settle(record.input_tokens, record.cost_usd, true);
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
        return errorResponse(ctx.format, outcome.error, refusal(), new Headers(headers));
      }
      case "reply": {
        await finish(200, 200, outcome.inputTokens, outcome.estimated);
        return Response.json(outcome.body, { headers });
      }
      default: {
        const never: never = outcome;
        return never;
      }
    }
  } catch (e) {
    admitted?.settle(0);
    const err = toGatewayError(e, deps.logger, ctx.id);
    if (blocked && err.code === "guardrail_blocked") {
      const record = embeddingsRecord(deps, {
        ...blocked,
        requestId: ctx.id,
        inputTokens: 0,
        estimated: false,
        status: err.status,
        upstreamStatus: 0,
        aborted: false,
        started: ctx.started,
        guard,
      });
      emit(deps.hooks, "onFinish", ctx, err.status, record, undefined);
      await deps.ledger.record(record);
      return errorResponse(ctx.format, err, refusal());
    }
    emit(deps.hooks, "onFinish", ctx, err.status, undefined);
    return errorResponse(ctx.format, err, refusal());
  }
}
