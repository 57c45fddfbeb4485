/**
 * A {@link MockReply} as the messages format: the JSON reply, or the SSE event sequence the
 * gateway writes (`event:` line equal to the JSON `type`, docs/protocols.md §1.7).
 */
import type {
  ContentBlock,
  MessagesErrorBody,
  MessagesRequest,
  MessagesResponse,
  MessagesStreamEvent,
} from "@turnpike/schema";
import { messagesErrorType } from "@turnpike/schema/error-types";
import { formatSSE } from "@turnpike/schema/sse";
import { estimateTokens, splitText } from "./estimate-tokens.js";
import type { MockError, MockReply } from "./mock-reply.js";

/** The default reply text. */
export const DEFAULT_TEXT = "Hello from the Turnpike mock.";

/** The complete reply `messages.create` returns. */
export function renderMessagesResponse(reply: MockReply, request: MessagesRequest, id: string): MessagesResponse {
  const content: ContentBlock[] = [];
  if (reply.thinking !== undefined)
    content.push({ type: "thinking", thinking: reply.thinking, signature: "mock-signature" });
  const text = reply.text ?? (reply.toolCalls?.length ? undefined : DEFAULT_TEXT);
  if (text !== undefined) content.push({ type: "text", text });
  reply.toolCalls?.forEach((call, i) => {
    content.push({ type: "tool_use", id: call.id ?? `toolu_mock_${id}_${i}`, name: call.name, input: call.input });
  });
  const outputText =
    (reply.thinking ?? "") + (text ?? "") + (reply.toolCalls ?? []).map((c) => JSON.stringify(c.input)).join("");
  return {
    id: `msg_mock_${id}`,
    type: "message",
    role: "assistant",
    model: request.model,
    content,
    stop_reason: reply.stopReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: {
      input_tokens:
        reply.usage?.input_tokens ??
        estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.system ?? "")),
      output_tokens: reply.usage?.output_tokens ?? estimateTokens(outputText),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

/** The SSE frames of a streamed reply, in order; an in-band error replaces the tail. */
export function renderMessagesFrames(reply: MockReply, response: MessagesResponse): string[] {
  const events: MessagesStreamEvent[] = [];
  events.push({
    type: "message_start",
    message: {
      ...response,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...response.usage, output_tokens: 1 },
    },
  });
  events.push({ type: "ping" });
  response.content.forEach((block, index) => {
    switch (block.type) {
      case "text":
        events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
        for (const piece of splitText(block.text)) {
          events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
        }
        break;
      case "thinking":
        events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } });
        for (const piece of splitText(block.thinking)) {
          events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } });
        }
        events.push({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature ?? "" },
        });
        break;
      case "tool_use": {
        // As real streams do: open with `input: {}`, then `""`, then the JSON in fragments.
        events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
        const json = JSON.stringify(block.input);
        const half = Math.ceil(json.length / 2);
        for (const partial_json of ["", json.slice(0, half), json.slice(half)]) {
          events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
        }
        break;
      }
      default:
        events.push({ type: "content_block_start", index, content_block: block });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: response.stop_reason, stop_sequence: null },
    usage: { output_tokens: response.usage.output_tokens, input_tokens: response.usage.input_tokens },
  });
  events.push({ type: "message_stop" });

  const frames = events.map((event) => formatSSE({ event: event.type, data: JSON.stringify(event) }));
  const failure = reply.streamError;
  if (!failure) return frames;
  const error = {
    type: "error" as const,
    error: { type: failure.type ?? messagesErrorType(failure.status), message: errorMessage(failure) },
  };
  return [...frames.slice(0, failure.afterEvents ?? 1), formatSSE({ event: "error", data: JSON.stringify(error) })];
}

/** The messages-format error body. */
export function renderMessagesError(error: MockError, requestId: string): MessagesErrorBody {
  return {
    type: "error",
    error: { type: error.type ?? messagesErrorType(error.status), message: errorMessage(error) },
    request_id: requestId,
  };
}

export function errorMessage(error: MockError): string {
  return error.message ?? `Mocked error with status ${error.status}`;
}
