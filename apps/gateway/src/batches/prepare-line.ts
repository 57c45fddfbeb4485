import type { GatewayDeps } from "../wiring/deps";
import { plan } from "../dispatch/plan";
import { resolve } from "../dispatch/resolve";
import { embeddingsTarget } from "../embeddings/call-embeddings";
import { EMBEDDINGS_PROTOCOLS } from "../embeddings/embeddings-protocols";
import { readEmbeddingsRequest } from "../embeddings/embeddings-request";
import { FORMATS } from "../formats";
import type { ClientFormat } from "../formats/client-format";
import type { CatalogEntry } from "../vocabulary/target";
import { askedOutputCap } from "../limits/worst-case";
import { newContext } from "../request/context";
import { validate } from "../pipeline/validate";
import type { KeyRecord } from "../storage/store";
import { recall } from "../stored-responses/recall";
import type { Target } from "../vocabulary/target";
import { isRecord } from "../vocabulary/client-errors";
import { type LineEndpoint, lineRequest } from "./run-line";
import { UPSTREAM_BATCH_APIS } from "./upstream-batches";

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

/** The upstream endpoint a built request calls, where that upstream's batch API serves it. */
function batchEndpoint(target: Target, url: string): string | undefined {
  const path = new URL(url).pathname;
  if (target.upstream.protocol === "chat") {
    if (path.endsWith("/chat/completions")) return "/v1/chat/completions";
    if (path.endsWith("/embeddings")) return "/v1/embeddings";
  }
  if (target.upstream.protocol === "messages" && path.endsWith("/v1/messages")) return "/v1/messages";
  // One batch per model: the endpoint is the model's own path.
  if (target.upstream.protocol === "generate" && path.endsWith(":generateContent"))
    return path.slice(path.indexOf("/v1beta/models/"));
  return undefined;
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
): Promise<PreparedLine | undefined> {
  const off = deps.config.batches.upstreamOff;
  const usable = (t: Target) =>
    UPSTREAM_BATCH_APIS[t.upstream.protocol] !== undefined && !off.includes("all") && !off.includes(t.upstream.vendor);
  try {
    const request = lineRequest(endpoint, body);
    if (endpoint === "/v1/embeddings") {
      const req = readEmbeddingsRequest(body);
      const target = embeddingsTarget(deps, key, req);
      const protocol = EMBEDDINGS_PROTOCOLS[target.entry.protocol];
      if (!usable(target) || !protocol) return undefined;
      const sent = protocol.request(target, req);
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
    const p = await plan(deps, format, client, target);
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
  }
}
