import {
  GenerateToMessagesMachine,
  convertGenerateResponseToMessages,
  convertMessagesRequestToGenerate,
  generateUsageToTotals,
  upstreamErrorToGatewayError,
  type SignatureStore as SyncSignatures,
} from "@turnpike/providers";
import type { MessagesRequest } from "@turnpike/schema";
import type { SignatureStore } from "../stored-responses/signature-store";
import { namedModel } from "./model-label";
import { authHeaders, trimSlash, type UpstreamProtocol } from "./upstream-protocol";

/** Ids of the tool calls a request replays: the ones whose signatures it must send back. */
function replayedToolCallIds(pivot: MessagesRequest): string[] {
  const ids: string[] = [];
  for (const m of pivot.messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const b of m.content) if (b.type === "tool_use") ids.push(b.id);
  }
  return ids;
}

/**
 * The converters read and write signatures synchronously: reads come from what was fetched
 * before the conversion, writes go on to the store as they happen.
 */
function syncSignatures(store: SignatureStore, known: ReadonlyMap<string, string> = new Map()): SyncSignatures {
  return {
    get: (id) => known.get(id),
    set: (id, signature) => {
      void store.set(id, signature);
    },
  };
}

/** The generateContent protocol (`POST {base}/v1beta/models/{m}:generateContent`). */
export const generateProtocol: UpstreamProtocol = {
  id: "generate",
  auth: "x-goog-api-key",
  simulatorBase: (url) => url,
  inputAtStart: false,
  async fromPivot(pivot, target, signatures) {
    const known = await signatures.getMany(replayedToolCallIds(pivot));
    const r = convertMessagesRequestToGenerate(pivot, { signatures: syncSignatures(signatures, known), upstreamModel: target.entry.upstream_model });
    return { body: { ...r.body }, warnings: r.warnings, toolNames: r.toolNames };
  },
  buildRequest(target, body, { stream }) {
    const { entry, upstream } = target;
    const headers = { "content-type": "application/json", ...authHeaders(upstream.auth, upstream.apiKey), ...entry.upstream_headers };
    const m = `${trimSlash(upstream.baseURL)}/v1beta/models/${encodeURIComponent(entry.upstream_model)}`;
    return Promise.resolve({ url: stream ? `${m}:streamGenerateContent?alt=sse` : `${m}:generateContent`, headers, body: JSON.stringify(body) });
  },
  machine: (ctx, emit) =>
    new GenerateToMessagesMachine(
      { model: ctx.model, inputTokens: ctx.inputTokens, stopSequences: ctx.stopSequences, toolNames: ctx.toolNames, signatures: syncSignatures(ctx.signatures) },
      emit,
    ),
  reply: (json, ctx) =>
    convertGenerateResponseToMessages(json, { model: ctx.model, stopSequences: ctx.stopSequences, toolNames: ctx.toolNames, signatures: syncSignatures(ctx.signatures) }),
  parseError: (status, text, headers) => upstreamErrorToGatewayError("generate", status, text, headers),
  count(target, body) {
    const { entry, upstream } = target;
    // The count call wraps the same request body the generate call sends.
    return Promise.resolve({
      url: `${trimSlash(upstream.baseURL)}/v1beta/models/${encodeURIComponent(entry.upstream_model)}:countTokens`,
      headers: { "content-type": "application/json", ...authHeaders(upstream.auth, upstream.apiKey), ...entry.upstream_headers },
      body: JSON.stringify({ generateContentRequest: { ...body, model: `models/${entry.upstream_model}` } }),
    });
  },
  readCount: (json) => {
    const n = Number((json as { totalTokens?: unknown }).totalTokens); // vendor JSON: the field is checked below
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  },
  // generateContent is an upstream protocol only: no client speaks it, so nothing passes through.
  preparePassthrough() {},
  replyUsage: (json) => generateUsageToTotals(json.usageMetadata),
  // generateContent names the answering model `modelVersion` (docs/protocols.md §3.3).
  replyModel: (json) => (typeof json.modelVersion === "string" ? json.modelVersion : undefined),
  streamModel: (data) => namedModel(data, "modelVersion")?.name,
  passthrough: {
    raw: () => true,
    scan() {},
    inspect: (msg) => msg,
    text: () => "",
  },
};
