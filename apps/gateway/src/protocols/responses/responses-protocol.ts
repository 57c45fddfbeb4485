import {
  ResponsesToMessagesMachine,
  convertChatResponseToMessages,
  convertMessagesRequestToResponses,
  convertResponsesResponseToChat,
  responsesUsageToTotals,
  upstreamErrorToGatewayError,
} from "@turnpike/providers";
import type { SSEMessage } from "@turnpike/schema/sse";
import type { UsageSink } from "../../vocabulary/usage-sink";
import type { Target } from "../../vocabulary/target";
import { namedModel } from "../model-label";
import { dataAfter, parseRegion } from "../sse-scan";
import {
  authHeaders,
  putField,
  trimSlash,
  type PassthroughReader,
  type PassthroughState,
  type UpstreamProtocol,
} from "../upstream-protocol";
import { bodyText } from "../body-text";

/** The events that end a Responses stream; the first two say how the reply ended. */
const FINISHED = ["response.completed", "response.incomplete"] as const;
const ENDED = [...FINISHED, "response.failed", "error"] as const;

/** Fields of a create request the input-token count takes (the rest is not part of the prompt). */
const COUNTED = [
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "reasoning",
  "text",
  "truncation",
] as const;

/** The text a delta event carries (output text, refusal, reasoning summary, tool arguments). */
function deltaText(data: string): string {
  const ev = JSON.parse(data) as { type?: unknown; delta?: unknown }; // vendor JSON, read leniently
  return typeof ev.type === "string" && ev.type.endsWith(".delta") && typeof ev.delta === "string" ? ev.delta : "";
}

/**
 * A terminal event's response: its usage is reported, and the response itself kept (Turnpike
 * stores a passed-through reply the client asked to keep).
 */
function readEnd(name: string, data: string, sink: UsageSink, state: PassthroughState): void {
  state.terminated = true;
  if (name === "error") return;
  const ev = JSON.parse(data) as { response?: Record<string, unknown> }; // vendor JSON, read leniently
  const response = ev.response;
  if (typeof response !== "object" || response === null) return;
  if (response.usage) sink.report(responsesUsageToTotals(response.usage), true);
  if ((FINISHED as readonly string[]).includes(name)) {
    state.finished = true;
    state.reply = response;
  }
}

/** Usage and the reply from the terminal event; every other event passes as text. */
const passthrough: PassthroughReader = {
  // Nothing of a Responses event is changed (the model's name is put right by the tap, as text).
  raw: () => true,
  scan(region, sink, state) {
    for (const name of ENDED) {
      const at = region.indexOf(`event: ${name}\n`);
      if (at === -1) continue;
      const data = dataAfter(region, at);
      if (data) readEnd(name, data, sink, state);
      else state.terminated = true;
    }
  },
  inspect(msg: SSEMessage, sink, _opts, state): SSEMessage | undefined {
    const name = msg.event ?? namedModel(msg.data, "type")?.name;
    if (name !== undefined && (ENDED as readonly string[]).includes(name)) readEnd(name, msg.data, sink, state);
    return msg;
  },
  text(dataOrRegion) {
    if (dataOrRegion.charCodeAt(0) === 123 /* { */) return deltaText(dataOrRegion);
    let text = "";
    for (const msg of parseRegion(dataOrRegion)) if (msg.event?.endsWith(".delta")) text += deltaText(msg.data);
    return text;
  },
};

function headersOf({ entry, upstream }: Target): Record<string, string> {
  return {
    "content-type": "application/json",
    ...authHeaders(upstream.auth, upstream.apiKey),
    ...entry.upstream_headers,
  };
}

/**
 * The Responses protocol (`POST {base}/responses`, base ending in `/v1`): what a vendor that
 * speaks the Responses API natively is reached with (docs/protocols.md §5.4). A Responses client
 * passes through to it; messages and chat clients are translated through the pivot, whose reply
 * and stream are read through the chat readers.
 */
export const responsesProtocol: UpstreamProtocol = {
  id: "responses",
  auth: "bearer",
  simulatorBase: (url) => `${url}/v1`,
  inputAtStart: false,
  fromPivot(pivot, target) {
    const r = convertMessagesRequestToResponses(pivot, { upstreamModel: target.entry.upstream_model });
    return Promise.resolve({ body: r.body, warnings: r.warnings, toolNames: r.toolNames });
  },
  buildRequest(target, body) {
    return Promise.resolve({
      url: `${trimSlash(target.upstream.baseURL)}/responses`,
      headers: headersOf(target),
      body: bodyText(body),
    });
  },
  machine: (ctx, emit) =>
    new ResponsesToMessagesMachine(
      { model: ctx.model, inputTokens: ctx.inputTokens, stopSequences: ctx.stopSequences, toolNames: ctx.toolNames },
      emit,
    ),
  reply: (json, ctx) =>
    convertChatResponseToMessages(convertResponsesResponseToChat(json), {
      model: ctx.model,
      stopSequences: ctx.stopSequences,
      toolNames: ctx.toolNames,
    }),
  parseError: (status, text, headers) => upstreamErrorToGatewayError("responses", status, text, headers),
  count(target, body) {
    const counted: Record<string, unknown> = {};
    for (const k of COUNTED) if (body[k] !== undefined) counted[k] = body[k];
    return Promise.resolve({
      url: `${trimSlash(target.upstream.baseURL)}/responses/input_tokens`,
      headers: headersOf(target),
      body: JSON.stringify(counted),
    });
  },
  readCount: (json) => {
    const n = Number((json as { input_tokens?: unknown }).input_tokens); // vendor JSON: the field is checked below
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  },
  // Every Responses reply reports its usage: nothing to ask for.
  preparePassthrough() {},
  replyUsage: (json) => responsesUsageToTotals(json.usage),
  replyModel: (json) => (typeof json.model === "string" ? json.model : undefined),
  streamModel: (data) => namedModel(data)?.name,
  passthrough,
  // No embeddings call, and no batch API of its own: its batch lines run in Turnpike's queue.
  embeddings: undefined,
  batches: undefined,
  readsClientBetas: false,
  continueBy: "ask",
  // The vendor's in-band error is `error` then `response.failed`; either may come alone. The
  // client's encoder goes on in the vendor's ids and numbering (its `resume`).
  readBack: { errorMarks: ["event: error\n", "event: response.failed\n"] },
  serviceTier: (body, tier) => putField(body, "service_tier", tier),
  parameters: ["max_tokens", "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls", "reasoning"],
};
