/**
 * A {@link MockReply} as the Responses format (docs/protocols.md §5): the response object, or the
 * stream of events the gateway writes for it — `response.created`, `response.in_progress`, per
 * output item `output_item.added`, its parts and deltas and `output_item.done`, then
 * `response.completed` (or `response.incomplete`), every event with its `sequence_number`. An
 * in-band error is `error` followed by `response.failed` with the output so far, as the gateway
 * sends it. Thinking becomes a `reasoning` item, text one `message` item, each tool call a
 * `function_call` item, in that order, as the gateway orders them.
 */
import type {
  ResponsesInputItem,
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesStreamEventType,
  StopReason,
} from "@turnpike/schema";
import { messagesErrorType } from "@turnpike/schema/error-types";
import { formatSSE } from "@turnpike/schema/sse";
import { estimateTokens, splitText } from "./estimate-tokens.js";
import type { MockReply } from "./mock-reply.js";
import { DEFAULT_TEXT, errorMessage } from "./render-messages.js";

/** Stop reason → status and why it is incomplete, as the gateway maps it. */
const STATUS_OF: Record<StopReason, { status: ResponsesStatus; incomplete: ResponsesResponse["incomplete_details"] }> =
  {
    end_turn: { status: "completed", incomplete: null },
    stop_sequence: { status: "completed", incomplete: null },
    pause_turn: { status: "completed", incomplete: null },
    tool_use: { status: "completed", incomplete: null },
    max_tokens: { status: "incomplete", incomplete: { reason: "max_output_tokens" } },
    model_context_window_exceeded: { status: "incomplete", incomplete: { reason: "max_output_tokens" } },
    refusal: { status: "incomplete", incomplete: { reason: "content_filter" } },
  };

/** The input of a request as a list of items (a string is one user message). */
export function inputItemsOf(request: ResponsesRequest): ResponsesInputItem[] {
  return typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
}

/** The complete response `responses.create` returns. */
export function renderResponsesResponse(
  reply: MockReply,
  request: ResponsesRequest,
  n: string,
  createdAt: number,
): ResponsesResponse {
  const output: ResponsesOutputItem[] = [];
  if (reply.thinking !== undefined) {
    output.push({
      type: "reasoning",
      id: `rs_mock_${n}`,
      summary: reply.thinking ? [{ type: "summary_text", text: reply.thinking }] : [],
    });
  }
  const text = reply.text ?? (reply.toolCalls?.length ? undefined : DEFAULT_TEXT);
  if (text !== undefined) {
    output.push({
      type: "message",
      id: `msg_mock_${n}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
    });
  }
  reply.toolCalls?.forEach((call, i) => {
    const args = JSON.stringify(call.input);
    output.push({
      type: "function_call",
      id: `fc_mock_${n}_${i}`,
      call_id: call.id ?? `call_mock_${n}_${i}`,
      name: call.name,
      arguments: args,
      status: "completed",
    });
  });
  const outputText =
    (reply.thinking ?? "") + (text ?? "") + (reply.toolCalls ?? []).map((c) => JSON.stringify(c.input)).join("");
  const input =
    reply.usage?.input_tokens ?? estimateTokens(JSON.stringify(request.input) + (request.instructions ?? ""));
  const out = reply.usage?.output_tokens ?? estimateTokens(outputText);
  const { status, incomplete } = STATUS_OF[reply.stopReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn")];
  return {
    id: `resp_mock_${n}`,
    object: "response",
    created_at: createdAt,
    completed_at: status === "completed" ? createdAt : null,
    status,
    error: null,
    incomplete_details: incomplete,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: request.model,
    previous_response_id: request.previous_response_id ?? null,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? 1,
    top_p: request.top_p ?? 1,
    presence_penalty: request.presence_penalty ?? 0,
    frequency_penalty: request.frequency_penalty ?? 0,
    top_logprobs: request.top_logprobs ?? 0,
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    max_tool_calls: request.max_tool_calls ?? null,
    truncation: request.truncation ?? "disabled",
    text: { format: request.text?.format ?? { type: "text" } },
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    background: false,
    service_tier: request.service_tier ?? "default",
    metadata: request.metadata ?? {},
    user: request.user ?? null,
    safety_identifier: request.safety_identifier ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: out,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + out,
    },
  };
}

/** The SSE frames of a streamed response, in order; an in-band error replaces the tail. */
export function renderResponsesFrames(reply: MockReply, response: ResponsesResponse): string[] {
  const frames: string[] = [];
  // The output as a client has seen it after each frame, for the `response.failed` of a cut stream.
  const seen: ResponsesOutputItem[][] = [];
  const output: ResponsesOutputItem[] = [];
  const emit = (type: ResponsesStreamEventType, body: Record<string, unknown>): void => {
    // Written at once: the live items change as later events arrive.
    frames.push(formatSSE({ event: type, data: JSON.stringify({ type, ...body, sequence_number: frames.length }) }));
    seen.push(structuredClone(output));
  };

  const started = { ...response, status: "in_progress" as const, incomplete_details: null, output: [], usage: null };
  emit("response.created", { response: started });
  emit("response.in_progress", { response: started });
  response.output.forEach((item, output_index) => {
    switch (item.type) {
      case "message": {
        const live: typeof item = { ...item, status: "in_progress", content: [] };
        output.push(live);
        emit("response.output_item.added", { output_index, item: live });
        const at = { item_id: item.id, output_index };
        item.content.forEach((part, content_index) => {
          const open = { type: "output_text" as const, text: "", annotations: [], logprobs: [] };
          live.content.push(open);
          emit("response.content_part.added", { ...at, content_index, part: open });
          for (const delta of splitText(part.text)) {
            open.text += delta;
            emit("response.output_text.delta", { ...at, content_index, delta, logprobs: [] });
          }
          emit("response.output_text.done", { ...at, content_index, text: part.text, logprobs: [] });
          emit("response.content_part.done", {
            ...at,
            content_index,
            part: { type: "output_text", text: part.text, annotations: [] },
          });
        });
        live.status = "completed";
        emit("response.output_item.done", { output_index, item: live });
        break;
      }
      case "function_call": {
        const live: typeof item = { ...item, arguments: "", status: "in_progress" };
        output.push(live);
        emit("response.output_item.added", { output_index, item: live });
        const half = Math.ceil(item.arguments.length / 2);
        for (const delta of [item.arguments.slice(0, half), item.arguments.slice(half)]) {
          if (!delta) continue;
          live.arguments += delta;
          emit("response.function_call_arguments.delta", { item_id: item.id, output_index, delta });
        }
        live.status = "completed";
        emit("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.arguments });
        emit("response.output_item.done", { output_index, item: live });
        break;
      }
      case "custom_tool_call": {
        const live: typeof item = { ...item, input: "", status: "in_progress" };
        output.push(live);
        emit("response.output_item.added", { output_index, item: live });
        const half = Math.ceil(item.input.length / 2);
        for (const delta of [item.input.slice(0, half), item.input.slice(half)]) {
          if (!delta) continue;
          live.input += delta;
          emit("response.custom_tool_call_input.delta", { item_id: item.id, output_index, delta });
        }
        live.status = "completed";
        emit("response.custom_tool_call_input.done", { item_id: item.id, output_index, input: item.input });
        emit("response.output_item.done", { output_index, item: live });
        break;
      }
      case "reasoning": {
        const live: typeof item = { ...item, summary: [] };
        output.push(live);
        emit("response.output_item.added", { output_index, item: live });
        const summary = item.summary[0];
        if (summary) {
          const at = { item_id: item.id, output_index, summary_index: 0 };
          const open = { type: "summary_text" as const, text: "" };
          live.summary.push(open);
          emit("response.reasoning_summary_part.added", { ...at, part: open });
          for (const delta of splitText(summary.text)) {
            open.text += delta;
            emit("response.reasoning_summary_text.delta", { ...at, delta });
          }
          emit("response.reasoning_summary_text.done", { ...at, text: summary.text });
          emit("response.reasoning_summary_part.done", { ...at, part: summary });
        }
        emit("response.output_item.done", { output_index, item: live });
        break;
      }
      default: {
        const never: never = item;
        throw new Error(`unknown output item ${JSON.stringify(never)}`);
      }
    }
  });
  emit(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });

  const failure = reply.streamError;
  if (!failure) return frames;
  // Like the gateway: the stream has always begun (created, in_progress) before an error.
  const kept = Math.min(Math.max(failure.afterEvents ?? 2, 2), frames.length - 1);
  const code = failure.code ?? failure.type ?? messagesErrorType(failure.status);
  const message = errorMessage(failure);
  const usage = response.usage && { ...response.usage, output_tokens: 0, total_tokens: response.usage.input_tokens };
  const failed: ResponsesResponse = {
    ...response,
    status: "failed",
    incomplete_details: null,
    error: { code, message },
    output: seen[kept - 1] ?? [],
    usage,
  };
  const tail = [
    formatSSE({
      event: "error",
      data: JSON.stringify({ type: "error", code, message, param: null, sequence_number: kept }),
    }),
    formatSSE({
      event: "response.failed",
      data: JSON.stringify({ type: "response.failed", response: failed, sequence_number: kept + 1 }),
    }),
  ];
  return [...frames.slice(0, kept), ...tail];
}

/** An output item of a stored response as the input item that replays it (for `previous_response_id`). */
export function replayItem(item: ResponsesOutputItem): ResponsesInputItem {
  switch (item.type) {
    case "message":
      return {
        type: "message",
        role: "assistant",
        content: item.content.map((p) => ({ type: "output_text" as const, text: p.text })),
      };
    case "function_call":
      return { type: "function_call", call_id: item.call_id, name: item.name, arguments: item.arguments };
    case "custom_tool_call":
      return { type: "custom_tool_call", call_id: item.call_id, name: item.name, input: item.input };
    case "reasoning":
      return { type: "reasoning", id: item.id, summary: item.summary };
    default: {
      const never: never = item;
      throw new Error(`unknown output item ${JSON.stringify(never)}`);
    }
  }
}
