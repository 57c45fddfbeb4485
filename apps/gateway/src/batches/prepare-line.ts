import type { GatewayDeps } from "../wiring/deps";
import { plan } from "../dispatch/plan";
import { resolve } from "../dispatch/resolve";
import { embeddingsTarget } from "../embeddings/call-embeddings";
import { readEmbeddingsRequest } from "../embeddings/embeddings-request";
import { FORMATS } from "../formats";
import type { ClientFormat } from "../formats/client-format";
import type { CatalogEntry } from "../vocabulary/target";
import { askedOutputCap } from "../limits/worst-case";
import { newContext } from "../request/context";
import { PROTOCOLS } from "../protocols";
import { validate } from "../pipeline/validate";
import type { KeyRecord } from "../storage/store";
import { recall } from "../stored-responses/recall";
import type { Target } from "../vocabulary/target";
import { isRecord } from "../vocabulary/client-errors";
import { type LineEndpoint, lineRequest } from "./run-line";
import { guardFor, redactInputs } from "../guardrails/surfaces";
import type { GuardrailRun } from "../guardrails/run";

/** A line ready for an upstream's batch API: which upstream, which of its endpoints, and the body. */
export interface PreparedLine {
  vendor: string;
  /**
   * The upstream endpoint, as its batch API names it (`/v1/chat/completions`, `/v1/embeddings`,
   * `/v1/messages`; the generateContent protocol's `/v1beta/models/{m}:generateContent`).
   */
  endpoint: string;
  body: Record<string, unknown>;
  /** What its admission when it is sent reads: the client format, the model, the line's size and output cap. */
  admission: { format: ClientFormat; entry: CatalogEntry; size: number; outputCap: number | undefined };
}

/**
 * A line's external-hook answers (GuardrailRun `keptHookAnswers`), kept with the line: read by
 * every later reading of it (its sending, the replay of its answer, a run in the queue) instead of
 * asking the hook again, so a line asks a hook once. {@link prepareLine} reads `answers` and
 * leaves there what its run holds after (a block's answer too).
 */
export interface LineHooks {
  answers?: Record<string, unknown> | undefined;
}

/** The endpoint of its upstream's batch API that serves a built request, or undefined where none does. */
function batchEndpoint(target: Target, url: string): string | undefined {
  return PROTOCOLS[target.upstream.protocol].batches?.endpoint(new URL(url).pathname);
}

/**
 * Whether a line goes to its upstream's own batch API, and as what: the line is read, checked and
 * translated exactly as the pipeline would for a direct call (the same validation, model
 * resolution and translators), but nothing is sent, limited or metered here: the worker admits
 * the line (rate limits and budget reservation) when it sends it, and the line is metered when
 * its answer comes back and is replayed (batch-worker.ts, run-line.ts). Undefined: the line runs through
 * Turnpike's own queue (a vendor with no batch API or with it switched off, or a line the
 * pipeline refuses: the queue gives that refusal in the client's own format).
 */
export async function prepareLine(
  deps: GatewayDeps,
  key: KeyRecord,
  endpoint: LineEndpoint,
  body: Record<string, unknown>,
  hooks: LineHooks = {},
): Promise<PreparedLine | undefined> {
  const off = deps.config.batches.upstreamOff;
  const usable = (t: Target) =>
    PROTOCOLS[t.upstream.protocol].batches !== undefined && !off.includes("all") && !off.includes(t.upstream.vendor);
  let guard: GuardrailRun | undefined;
  const guarded = () => {
    guard = guardFor(deps.config.guardrails, key, "batch");
    if (guard && hooks.answers) guard.adoptHookAnswers(hooks.answers);
    return guard;
  };
  try {
    const request = lineRequest(endpoint, body);
    if (endpoint === "/v1/embeddings") {
      const req = readEmbeddingsRequest(body);
      const target = embeddingsTarget(deps, key, req);
      const embeddings = PROTOCOLS[target.entry.protocol].embeddings;
      if (!usable(target) || !embeddings) return undefined;
      // The key's guardrails read the inputs before they leave; a block is left to the queue, whose
      // run of the line gives it in the batch's output (docs/guardrails.md, "Batches").
      const g = guarded();
      const sent = embeddings.request(target, g ? { ...req, inputs: await redactInputs(g, req.inputs) } : req);
      const at = batchEndpoint(target, sent.url);
      const admission = {
        format: FORMATS.chat,
        entry: target.entry,
        size: JSON.stringify(body).length,
        outputCap: undefined,
      };
      return at ? { vendor: target.upstream.vendor, endpoint: at, body: JSON.parse(sent.body), admission } : undefined;
    }
    const format =
      endpoint === "/v1/chat/completions"
        ? FORMATS.chat
        : endpoint === "/v1/responses"
          ? FORMATS.responses
          : FORMATS.messages;
    const ctx = newContext(request, format, null, deps.config.trustedProxies);
    const { request: validated } = await validate(ctx, deps.config);
    const client = await recall(deps, key, validated);
    const target = resolve(deps, key, client.model);
    if (!usable(target)) return undefined;
    // Redacted as a direct call would be (the same placeholders: the replay of the answer through
    // the pipeline redacts the line again and restores them); a block is the queue's to report.
    const p = await plan(deps, format, client, target, 0, guarded());
    const sent = await p.protocol.buildRequest(p.target, p.body, { stream: false, clientHeaders: request.headers });
    const at = batchEndpoint(p.target, sent.url);
    const parsed: unknown = JSON.parse(sent.body);
    const admission = {
      format,
      entry: target.entry,
      size: JSON.stringify(body).length,
      outputCap: askedOutputCap(client.body),
    };
    return at && isRecord(parsed)
      ? { vendor: p.target.upstream.vendor, endpoint: at, body: parsed, admission }
      : undefined;
  } catch {
    // Refused here: the queue runs it, and the pipeline gives the refusal in the client's format.
    return undefined;
  } finally {
    if (guard?.hooked) hooks.answers = await guard.keptHookAnswers();
  }
}
