/**
 * A {@link MockReply} as the chat completions format: the JSON reply, or the `data:` chunks
 * ending in `data: [DONE]` (docs/protocols.md §2.6), with the usage chunk only when the request
 * asked for it (`stream_options.include_usage`).
 */
import type {
  ChatChunk,
  ChatErrorBody,
  ChatChunkChoice,
  ChatRequest,
  ChatResponse,
  ChatToolCall,
  FinishReason,
  StopReason,
} from "@turnpike/schema";
import { chatErrorType } from "@turnpike/schema/error-types";
import { formatSSE } from "@turnpike/schema/sse";
import { estimateTokens, splitText } from "./estimate-tokens.js";
import type { MockError, MockReply } from "./mock-reply.js";
import { DEFAULT_TEXT, errorMessage } from "./render-messages.js";

/** Stop reason → finish reason (docs/protocols.md §4.3). */
const FINISH_REASON: Record<StopReason, FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** The complete reply `chat.completions.create` returns. */
export function renderChatResponse(reply: MockReply, request: ChatRequest, id: string, created: number): ChatResponse {
  const text = reply.text ?? (reply.toolCalls?.length ? null : DEFAULT_TEXT);
  const toolCalls: ChatToolCall[] = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_mock_${id}_${i}`,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
  const prompt = reply.usage?.input_tokens ?? estimateTokens(JSON.stringify(request.messages));
  const completion =
    reply.usage?.output_tokens ?? estimateTokens((text ?? "") + toolCalls.map((c) => JSON.stringify(c)).join(""));
  const stop = reply.stopReason ?? (toolCalls.length ? "tool_use" : "end_turn");
  return {
    id: `chatcmpl-mock-${id}`,
    object: "chat.completion",
    created,
    model: request.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text,
          refusal: null,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: FINISH_REASON[stop],
      },
    ],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/** The SSE frames of a streamed reply, ending in `data: [DONE]`. */
export function renderChatFrames(reply: MockReply, request: ChatRequest, response: ChatResponse): string[] {
  const choice = response.choices[0];
  const chunk = (choices: ChatChunkChoice[], usage: ChatChunk["usage"] = null): ChatChunk => ({
    id: response.id,
    object: "chat.completion.chunk",
    created: response.created,
    model: response.model,
    choices,
    usage,
  });
  const delta = (d: ChatChunkChoice["delta"], finish: FinishReason | null = null): ChatChunk =>
    chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

  const chunks: ChatChunk[] = [delta({ role: "assistant", content: "" })];
  for (const piece of splitText(choice?.message.content ?? "")) chunks.push(delta({ content: piece }));
  choice?.message.tool_calls?.forEach((call, index) => {
    if (call.type !== "function") return;
    chunks.push(
      delta({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
      }),
    );
    const args = call.function.arguments;
    const half = Math.ceil(args.length / 2);
    for (const part of [args.slice(0, half), args.slice(half)]) {
      chunks.push(delta({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  chunks.push(delta({}, choice?.finish_reason ?? "stop"));
  if (request.stream_options?.include_usage && response.usage) chunks.push(chunk([], response.usage));

  const frames = chunks.map((c) => formatSSE({ data: JSON.stringify(c) }));
  const failure = reply.streamError;
  const done = formatSSE({ data: "[DONE]" });
  if (!failure) return [...frames, done];
  return [
    ...frames.slice(0, failure.afterEvents ?? 1),
    formatSSE({ data: JSON.stringify(renderChatError(failure)) }),
    done,
  ];
}

/** The chat-format error body. */
export function renderChatError(error: MockError): ChatErrorBody {
  const byStatus = chatErrorType(error.status);
  return {
    error: {
      message: errorMessage(error),
      type: error.type ?? byStatus.type,
      param: error.param ?? null,
      code: error.code ?? byStatus.code,
    },
  };
}
