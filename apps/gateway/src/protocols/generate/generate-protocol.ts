import {
  GenerateToMessagesMachine,
  SKIP_THOUGHT_SIGNATURE,
  isThoughtToken,
  convertGenerateResponseToMessages,
  convertMessagesRequestToGenerate,
  generateUsageToTotals,
  upstreamErrorToGatewayError,
  type SignatureStore as SyncSignatures,
} from "@turnpike/providers";
import type { MessagesRequest } from "@turnpike/schema";
import type { SignatureStore } from "../../vocabulary/signature-store";
import { namedModel } from "../model-label";
import { indexOfQuoted, parseRegion } from "../sse-scan";
import { authHeaders, putField, trimSlash, type PassthroughReader, type UpstreamProtocol } from "../upstream-protocol";
import { generateBatches } from "./generate-batches";
import { generateEmbeddings } from "./generate-embeddings";

type Chunk = {
  usageMetadata?: unknown;
  candidates?: { content?: { parts?: { text?: unknown; functionCall?: unknown }[] } }[];
};

/** The text of one chunk's parts (text, thoughts, call arguments), read only to count it. */
function chunkText(data: string): string {
  const chunk = JSON.parse(data) as Chunk; // vendor JSON, read leniently: every field is checked where used
  let text = "";
  for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
    if (typeof p.text === "string") text += p.text;
    if (p.functionCall !== undefined) text += JSON.stringify(p.functionCall);
  }
  return text;
}

/** Reads the usage of each chunk that carries one (cumulative: the last overwrites), and the finish. */
function readFrames(region: string, sink: Parameters<PassthroughReader["scan"]>[1]): void {
  for (
    let at = indexOfQuoted(region, 'usageMetadata"');
    at !== -1;
    at = indexOfQuoted(region, 'usageMetadata"', at + 15)
  ) {
    const start = region.lastIndexOf("\n", at) + 1;
    const end = region.indexOf("\n", at);
    const line = region.slice(start, end === -1 ? undefined : end);
    if (!line.startsWith("data:")) continue;
    const chunk = JSON.parse(line.slice(5)) as Chunk; // vendor JSON, read leniently
    if (chunk.usageMetadata !== undefined) sink.report(generateUsageToTotals(chunk.usageMetadata), closes(line));
  }
}

/**
 * Every chunk's usage counts what was generated so far; only the one that says how the reply
 * finished holds the closing numbers (a stream dropped before it is billed by its text).
 */
function closes(data: string): boolean {
  return indexOfQuoted(data, 'finishReason"') !== -1;
}

/**
 * A generateContent stream relayed to a client of the same format: its bytes go through; each
 * chunk's cumulative `usageMetadata` is read, and a `finishReason` says the reply ended (the
 * format has no terminator: the stream ends with the chunk that carries it).
 */
const passthrough: PassthroughReader = {
  raw: () => true,
  modelKey: "modelVersion",
  scan(region, sink, state) {
    readFrames(region, sink);
    if (closes(region)) state.finished = true;
  },
  inspect(msg, sink, _opts, state) {
    if (indexOfQuoted(msg.data, 'usageMetadata"') !== -1) {
      const chunk = JSON.parse(msg.data) as Chunk; // vendor JSON, read leniently
      if (chunk.usageMetadata !== undefined) sink.report(generateUsageToTotals(chunk.usageMetadata), closes(msg.data));
    }
    if (closes(msg.data)) state.finished = true;
    return msg;
  },
  text(dataOrRegion) {
    if (dataOrRegion.charCodeAt(0) === 123 /* { */) return chunkText(dataOrRegion);
    let text = "";
    for (const msg of parseRegion(dataOrRegion)) text += chunkText(msg.data);
    return text;
  },
};

/**
 * A client's turns with the thinking tokens Turnpike wrote for a messages upstream (a client that
 * switched models mid-conversation) replaced by the documented skip value: the vendor would refuse
 * them as corrupt signatures (docs/protocols.md §6.6). Untouched when there are none.
 */
function withoutThoughtTokens(contents: unknown): unknown {
  if (!Array.isArray(contents)) return contents;
  const partsOf = (c: unknown): unknown[] => {
    const parts = typeof c === "object" && c !== null ? (c as { parts?: unknown }).parts : undefined; // an object: checked on the left
    return Array.isArray(parts) ? parts : [];
  };
  const tokenIn = (p: unknown): boolean => {
    const sig =
      typeof p === "object" && p !== null ? (p as { thoughtSignature?: unknown }).thoughtSignature : undefined; // an object: checked on the left
    return typeof sig === "string" && isThoughtToken(sig);
  };
  if (!contents.some((c) => partsOf(c).some(tokenIn))) return contents;
  return contents.map((c: unknown) => {
    if (!partsOf(c).some(tokenIn)) return c;
    const parts = partsOf(c).map((p) =>
      tokenIn(p) ? { ...(p as object), thoughtSignature: SKIP_THOUGHT_SIGNATURE } : p,
    ); // an object: tokenIn checked it
    return { ...(c as object), parts }; // an object with parts: partsOf found some
  });
}

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
    const r = convertMessagesRequestToGenerate(pivot, {
      signatures: syncSignatures(signatures, known),
      upstreamModel: target.entry.upstream_model,
    });
    return { body: { ...r.body }, warnings: r.warnings, toolNames: r.toolNames };
  },
  buildRequest(target, body, { stream }) {
    const { entry, upstream } = target;
    const headers = {
      "content-type": "application/json",
      ...authHeaders(upstream.auth, upstream.apiKey),
      ...entry.upstream_headers,
    };
    const m = `${trimSlash(upstream.baseURL)}/v1beta/models/${encodeURIComponent(entry.upstream_model)}`;
    return Promise.resolve({
      url: stream ? `${m}:streamGenerateContent?alt=sse` : `${m}:generateContent`,
      headers,
      body: JSON.stringify(body),
    });
  },
  machine: (ctx, emit) =>
    new GenerateToMessagesMachine(
      {
        model: ctx.model,
        inputTokens: ctx.inputTokens,
        stopSequences: ctx.stopSequences,
        toolNames: ctx.toolNames,
        signatures: syncSignatures(ctx.signatures),
      },
      emit,
    ),
  reply: (json, ctx) =>
    convertGenerateResponseToMessages(json, {
      model: ctx.model,
      stopSequences: ctx.stopSequences,
      toolNames: ctx.toolNames,
      signatures: syncSignatures(ctx.signatures),
    }),
  parseError: (status, text, headers) => upstreamErrorToGatewayError("generate", status, text, headers),
  count(target, body) {
    const { entry, upstream } = target;
    // The count call wraps the same request body the generate call sends.
    return Promise.resolve({
      url: `${trimSlash(upstream.baseURL)}/v1beta/models/${encodeURIComponent(entry.upstream_model)}:countTokens`,
      headers: {
        "content-type": "application/json",
        ...authHeaders(upstream.auth, upstream.apiKey),
        ...entry.upstream_headers,
      },
      body: JSON.stringify({ generateContentRequest: { ...body, model: `models/${entry.upstream_model}` } }),
    });
  },
  readCount: (json) => {
    const n = Number((json as { totalTokens?: unknown }).totalTokens); // vendor JSON: the field is checked below
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  },
  preparePassthrough(body) {
    // The path names the model; the body a client of this format sends does not.
    delete body.model;
    body.contents = withoutThoughtTokens(body.contents);
  },
  replyUsage: (json) => generateUsageToTotals(json.usageMetadata),
  // generateContent names the answering model `modelVersion` (docs/protocols.md §3.3).
  replyModel: (json) => (typeof json.modelVersion === "string" ? json.modelVersion : undefined),
  streamModel: (data) => namedModel(data, "modelVersion")?.name,
  passthrough,
  embeddings: generateEmbeddings,
  batches: generateBatches,
  readsClientBetas: false,
  continueBy: "ask",
  // The vendor's in-band error is a chunk holding its error envelope (`{"error": {code, message}}`); the
  // client's encoder goes on with the vendor's `responseId` (its `resume`).
  readBack: { errorMarks: ['data: {"error"'] },
  serviceTier: (body, tier) => putField(body, "serviceTier", tier),
  parameters: [
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "tools",
    "tool_choice",
    "reasoning",
    "frequency_penalty",
    "presence_penalty",
    "seed",
  ],
};
