import {
  ChatToMessagesMachine,
  chatUsageToTotals,
  convertChatResponseToMessages,
  convertMessagesRequestToChat,
  upstreamErrorToGatewayError,
} from "@turnpike/providers";
import { namedModel } from "../model-label";
import { indexOfQuoted, parseRegion } from "../sse-scan";
import { authHeaders, putField, trimSlash, type PassthroughReader, type UpstreamProtocol } from "../upstream-protocol";
import { bodyText } from "../body-text";
import { chatBatches } from "./chat-batches";
import { chatEmbeddings } from "./chat-embeddings";

type Chunk = {
  model?: string;
  usage?: unknown;
  choices?: {
    delta?: { content?: unknown; reasoning_content?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] };
  }[];
};

/** The text of a chunk's delta: content, reasoning and tool arguments. */
function deltaText(data: string): string {
  const delta = (JSON.parse(data) as Chunk).choices?.[0]?.delta; // vendor JSON, read leniently: every field is checked where used
  if (!delta) return "";
  let text = "";
  if (typeof delta.content === "string") text += delta.content;
  if (typeof delta.reasoning_content === "string") text += delta.reasoning_content;
  for (const t of delta.tool_calls ?? []) if (typeof t.function?.arguments === "string") text += t.function.arguments;
  return text;
}

/** Usage chunks, the finish, `[DONE]`; the usage chunk the client did not ask for is dropped. */

/**
 * A chunk as the client gets it when it did not ask for usage (Turnpike asked for it): the
 * usage-only chunk is not relayed (undefined), any other loses its usage field.
 */
function withoutUsage(chunk: Chunk): string | undefined {
  if (Array.isArray(chunk.choices) && chunk.choices.length === 0) return undefined;
  delete chunk.usage;
  return JSON.stringify(chunk);
}
const passthrough: PassthroughReader = {
  // Turnpike always asks a chat upstream for usage: raw bytes only if the client asked too (the
  // model's name is put right by the tap, as text).
  raw: (opts) => opts.includeUsage,
  markers: ['usage":{', 'finish_reason":"', "data: [DONE]"],
  scan(region, sink, state) {
    for (let at = indexOfQuoted(region, 'usage":{'); at !== -1; at = indexOfQuoted(region, 'usage":{', at + 9)) {
      const start = region.lastIndexOf("\n", at) + 1;
      const end = region.indexOf("\n", at);
      const line = region.slice(start, end === -1 ? undefined : end);
      if (!line.startsWith("data: ")) continue;
      const chunk = JSON.parse(line.slice(6)) as Chunk; // vendor JSON, read leniently
      if (chunk.usage) sink.report(chatUsageToTotals(chunk.usage), true);
    }
    if (indexOfQuoted(region, 'finish_reason":"') !== -1) state.finished = true;
    if (region.includes("data: [DONE]")) state.terminated = true;
  },
  trim(region, opts) {
    if (opts.includeUsage) return region;
    // The usage chunk the client did not ask for (Turnpike asked for it) is taken out, as
    // inspect() does; only the frames that carry usage are touched, the rest is sliced through.
    let out = "";
    let from = 0;
    for (let at = indexOfQuoted(region, 'usage":{'); at !== -1; at = indexOfQuoted(region, 'usage":{', from)) {
      const before = region.lastIndexOf("\n\n", at);
      const start = before === -1 ? 0 : before + 2;
      const end = region.indexOf("\n\n", at);
      if (end === -1 || start < from) return undefined;
      const frame = region.slice(start, end);
      if (!frame.startsWith("data: {") || frame.includes("\n")) return undefined; // not one data line: the parser's
      const kept = withoutUsage(JSON.parse(frame.slice(6)) as Chunk); // vendor JSON, read leniently
      out += region.slice(from, start);
      if (kept !== undefined) out += `data: ${kept}\n\n`;
      from = end + 2;
    }
    return from === 0 ? region : out + region.slice(from);
  },
  inspect(msg, sink, opts, state) {
    if (msg.data === "[DONE]") {
      state.terminated = true;
      return msg;
    }
    if (!state.finished && indexOfQuoted(msg.data, 'finish_reason":"') !== -1) state.finished = true;
    // Only chunks that carry usage are parsed; the rest pass as text.
    if (indexOfQuoted(msg.data, 'usage":{') === -1) return msg;
    const chunk = JSON.parse(msg.data) as Chunk; // vendor JSON, read leniently
    if (chunk.usage) {
      sink.report(chatUsageToTotals(chunk.usage), true);
      if (!opts.includeUsage) {
        const kept = withoutUsage(chunk);
        return kept === undefined ? undefined : { ...msg, data: kept };
      }
    }
    return msg;
  },
  text(dataOrRegion) {
    if (dataOrRegion.charCodeAt(0) === 123 /* { */) return deltaText(dataOrRegion);
    let text = "";
    for (const msg of parseRegion(dataOrRegion)) if (msg.data !== "[DONE]") text += deltaText(msg.data);
    return text;
  },
};

/** The chat completions protocol (`POST {base}/chat/completions`, base ending in `/v1`). */
export const chatProtocol: UpstreamProtocol = {
  id: "chat",
  auth: "bearer",
  simulatorBase: (url) => `${url}/v1`,
  inputAtStart: false,
  fromPivot(pivot, target) {
    const r = convertMessagesRequestToChat(pivot, { upstreamModel: target.entry.upstream_model });
    return Promise.resolve({ body: r.body, warnings: r.warnings, toolNames: r.toolNames });
  },
  buildRequest(target, body) {
    const { entry, upstream } = target;
    const headers = {
      "content-type": "application/json",
      ...authHeaders(upstream.auth, upstream.apiKey),
      ...entry.upstream_headers,
    };
    return Promise.resolve({ url: `${trimSlash(upstream.baseURL)}/chat/completions`, headers, body: bodyText(body) });
  },
  machine: (ctx, emit) =>
    new ChatToMessagesMachine(
      { model: ctx.model, inputTokens: ctx.inputTokens, stopSequences: ctx.stopSequences, toolNames: ctx.toolNames },
      emit,
    ),
  reply: (json, ctx) =>
    convertChatResponseToMessages(json, {
      model: ctx.model,
      stopSequences: ctx.stopSequences,
      toolNames: ctx.toolNames,
    }),
  parseError: (status, text, headers) => upstreamErrorToGatewayError("chat", status, text, headers),
  // The protocol has no count call: the local tokenizer counts for it.
  count: undefined,
  readCount: () => undefined,
  preparePassthrough(body, stream) {
    if (!stream) return;
    // Always ask a chat upstream for usage, whatever the client asked (docs/protocols.md §4.1).
    const so = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
    body.stream_options = { ...so, include_usage: true };
  },
  replyUsage: (json) => chatUsageToTotals(json.usage),
  streamModel: (data) => namedModel(data)?.name,
  replyModel: (json) => (typeof json.model === "string" ? json.model : undefined),
  passthrough,
  embeddings: chatEmbeddings,
  batches: chatBatches,
  readsClientBetas: false,
  continueBy: "ask",
  readBack: {
    errorMarks: ['data: {"error"'],
    // The chat machine names its message `msg_<chunk id>`; the chat encoder's chunks are
    // `chatcmpl-<message id without msg_>`: the upstream's own id, kept.
    fix(ev) {
      if (ev.type === "message_start") ev.message.id = ev.message.id.replace(/^msg_chatcmpl-/, "msg_");
    },
  },
  serviceTier: (body, tier) => putField(body, "service_tier", tier),
  parameters: [
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "logit_bias",
  ],
};
