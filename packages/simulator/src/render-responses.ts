import { formatSSE } from "@turnpike/schema/sse";
import { splitEvenly } from "./build-reply-text";
import type { ReplyPlan } from "./plan-reply";
import { withMidstream, type RenderContext, type StreamPlan } from "./stream-plan";

/**
 * The Responses API's reply (docs/protocols.md §5.2, §5.3): a response object whose output items
 * are a reasoning item (a summary when one was asked for, encrypted content when `include` asks),
 * a message of `output_text`, and function calls; the stream is the real event sequence with
 * `sequence_number`s, ending in `response.completed` / `response.incomplete` with the whole
 * response, or `error` then `response.failed`.
 */

export interface ResponsesRender {
  /** `include: ["reasoning.encrypted_content"]` was asked for. */
  encryptedReasoning: boolean;
  /** The request's settings the response object repeats (instructions, tools, store, …). */
  echo: Record<string, unknown>;
  /** Names of the request's custom (free-form) tools: their calls are `custom_tool_call` items. */
  customTools?: readonly string[];
}

export const NO_ECHO: ResponsesRender = { encryptedReasoning: false, echo: {} };

/** A custom tool call's input: the `input` string of the arguments the plan wrote for it. */
function customInput(json: string): string {
  const args: unknown = JSON.parse(json);
  const input = typeof args === "object" && args !== null ? (args as { input?: unknown }).input : undefined; // an object: checked on the left
  return typeof input === "string" ? input : json;
}

type Item = Record<string, unknown>;

const ids = (ctx: RenderContext) => ({
  response: `resp_sim${ctx.seq}`,
  reasoning: `rs_sim${ctx.seq}`,
  message: `msg_sim${ctx.seq}`,
  call: (i: number) => `fc_sim${ctx.seq}_${i}`,
  callId: (i: number) => `call_sim${ctx.seq}_${i}`,
});

function status(plan: ReplyPlan): { status: string; incomplete_details: Item | null } {
  if (plan.stop === "max_tokens") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (plan.stop === "refusal") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

function usage(plan: ReplyPlan): Item {
  return {
    // The cached part is included in input_tokens, the reasoning in output_tokens.
    input_tokens: plan.inputTokens,
    input_tokens_details: { cached_tokens: plan.cache?.read ?? 0 },
    output_tokens: plan.outputTokens,
    output_tokens_details: { reasoning_tokens: plan.thinkingTokens },
    total_tokens: plan.inputTokens + plan.outputTokens,
  };
}

/** The output items of the finished reply, in order. */
function outputItems(plan: ReplyPlan, ctx: RenderContext, r: ResponsesRender): Item[] {
  const id = ids(ctx);
  const items: Item[] = [];
  if (plan.thinkingTokens > 0) {
    items.push({
      type: "reasoning",
      id: id.reasoning,
      summary:
        plan.showThinking && plan.thinking.length ? [{ type: "summary_text", text: plan.thinking.join("") }] : [],
      ...(r.encryptedReasoning ? { encrypted_content: plan.signature } : {}),
    });
  }
  if (plan.text.length) {
    const done = plan.stop === "max_tokens" ? "incomplete" : "completed";
    items.push({
      type: "message",
      id: id.message,
      status: done,
      role: "assistant",
      content: [{ type: "output_text", text: plan.text.join(""), annotations: [], logprobs: [] }],
    });
  }
  plan.toolCalls.forEach((c, i) =>
    items.push(
      r.customTools?.includes(c.name)
        ? {
            type: "custom_tool_call",
            id: `ctc_sim${ctx.seq}_${i}`,
            call_id: id.callId(i),
            name: c.name,
            input: customInput(c.json),
            status: "completed",
          }
        : {
            type: "function_call",
            id: id.call(i),
            call_id: id.callId(i),
            name: c.name,
            arguments: c.json,
            status: "completed",
          },
    ),
  );
  return items;
}

interface Envelope {
  plan: ReplyPlan;
  ctx: RenderContext;
  r: ResponsesRender;
}

function envelope(
  { plan, ctx, r }: Envelope,
  s: { status: string; incomplete_details: Item | null },
  output: Item[],
  u: Item | null,
  error: Item | null = null,
): Item {
  return {
    id: ids(ctx).response,
    object: "response",
    created_at: ctx.created,
    completed_at: s.status === "completed" ? ctx.created : null,
    status: s.status,
    error,
    incomplete_details: s.incomplete_details,
    instructions: null,
    max_output_tokens: null,
    model: plan.model,
    previous_response_id: null,
    output,
    parallel_tool_calls: true,
    temperature: 1,
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    tool_choice: "auto",
    tools: [],
    max_tool_calls: null,
    truncation: "disabled",
    text: { format: { type: "text" } },
    reasoning: { effort: null, summary: null },
    store: true,
    background: false,
    service_tier: "default",
    metadata: {},
    user: null,
    safety_identifier: null,
    prompt_cache_key: null,
    ...r.echo,
    usage: u,
  };
}

export function responsesJson(plan: ReplyPlan, ctx: RenderContext, r: ResponsesRender): string {
  return JSON.stringify(envelope({ plan, ctx, r }, status(plan), outputItems(plan, ctx, r), usage(plan)));
}

export function responsesStream(plan: ReplyPlan, ctx: RenderContext, r: ResponsesRender): StreamPlan {
  const frames: string[] = [];
  const deltaAt: number[] = [];
  const emit = (type: string, body: Item, delta = false) => {
    if (delta) deltaAt.push(frames.length);
    frames.push(formatSSE({ event: type, data: JSON.stringify({ type, ...body, sequence_number: frames.length }) }));
  };
  const started = { status: "in_progress", incomplete_details: null };
  const e = { plan, ctx, r };
  emit("response.created", { response: envelope(e, started, [], null) });
  emit("response.in_progress", { response: envelope(e, started, [], null) });
  const items = outputItems(plan, ctx, r);
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      emit("response.output_item.added", { output_index, item: { ...item, summary: [] } });
      const summary = item.summary as { text: string }[];
      if (summary.length) {
        const at = { item_id, output_index, summary_index: 0 };
        emit("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
        for (const delta of plan.thinking) emit("response.reasoning_summary_text.delta", { ...at, delta }, true);
        emit("response.reasoning_summary_text.done", { ...at, text: summary[0]!.text });
        emit("response.reasoning_summary_part.done", { ...at, part: summary[0] });
      }
    } else if (item.type === "message") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      const at = { item_id, output_index, content_index: 0 };
      const part = (item.content as Item[])[0]!;
      emit("response.content_part.added", {
        ...at,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      });
      for (const delta of plan.text) emit("response.output_text.delta", { ...at, delta, logprobs: [] }, true);
      emit("response.output_text.done", { ...at, text: part.text, logprobs: [] });
      emit("response.content_part.done", { ...at, part });
    } else if (item.type === "custom_tool_call") {
      emit("response.output_item.added", { output_index, item: { ...item, input: "", status: "in_progress" } });
      for (const delta of splitEvenly(String(item.input), 3))
        emit("response.custom_tool_call_input.delta", { item_id, output_index, delta }, true);
      emit("response.custom_tool_call_input.done", { item_id, output_index, input: item.input });
    } else {
      emit("response.output_item.added", { output_index, item: { ...item, arguments: "", status: "in_progress" } });
      for (const delta of splitEvenly(String(item.arguments), 3))
        emit("response.function_call_arguments.delta", { item_id, output_index, delta }, true);
      emit("response.function_call_arguments.done", { item_id, output_index, arguments: item.arguments });
    }
    emit("response.output_item.done", { output_index, item });
  });
  const s = status(plan);
  emit(s.status === "completed" ? "response.completed" : "response.incomplete", {
    response: envelope(e, s, items, usage(plan)),
  });
  return withMidstream(frames, deltaAt, plan.midstream, failedFrames(e, deltaAt));
}

/** What a server error in the middle of the stream ends with: `error`, then `response.failed`. */
function failedFrames(e: Envelope, deltaAt: number[]): string[] {
  // The sequence continues from the frames withMidstream keeps (through the middle delta).
  const seq = deltaAt.length > 0 ? deltaAt[Math.ceil(deltaAt.length / 2) - 1]! + 1 : 1;
  const message = "The server had an error while processing your request. Sorry about that!";
  const error = { type: "error", code: "server_error", message, param: null, sequence_number: seq };
  const failed = envelope(e, { status: "failed", incomplete_details: null }, [], null, {
    code: "server_error",
    message,
  });
  return [
    formatSSE({ event: "error", data: JSON.stringify(error) }),
    formatSSE({
      event: "response.failed",
      data: JSON.stringify({ type: "response.failed", response: failed, sequence_number: seq + 1 }),
    }),
  ];
}
