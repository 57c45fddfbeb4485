import { formatSSE } from "@turnpike/schema/sse";
import { splitEvenly } from "./build-reply-text";
import type { ReplyPlan, StopKind } from "./plan-reply";
import { withMidstream, type RenderContext, type StreamPlan } from "./stream-plan";

const STOP_REASON: Record<StopKind, string> = {
  end: "end_turn",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  tool_use: "tool_use",
  refusal: "refusal",
};
const REFUSAL_DETAILS = {
  type: "refusal",
  category: null,
  explanation: "The simulator refused this request ([sim refusal]).",
};
const OVERLOADED = { type: "error", error: { details: null, type: "overloaded_error", message: "Overloaded" } };

/** Variants of this protocol's stream (docs/protocols.md §1.7). */
export const MESSAGES_VARIANTS = ["no-input-in-delta"] as const;

// The real API never reports 0 output tokens (docs/protocols.md §1.6).
const output = (plan: ReplyPlan) => Math.max(1, plan.outputTokens);
const toolId = (ctx: RenderContext, i: number) => `toolu_sim${ctx.seq}_${i}`;

function usage(plan: ReplyPlan, outputTokens: number) {
  const { read, write, write1h } = plan.cache ?? { read: 0, write: 0, write1h: 0 };
  return {
    // Input excludes what was read from or written to the cache (docs/protocols.md §1.6).
    input_tokens: plan.inputTokens - read - write,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: write - write1h, ephemeral_1h_input_tokens: write1h },
    output_tokens: outputTokens,
    service_tier: "standard",
  };
}

/** The non-streaming reply body (docs/protocols.md §1.4). */
export function messagesJson(plan: ReplyPlan, ctx: RenderContext): string {
  const content: unknown[] = [];
  if (plan.thinking.length > 0)
    content.push({ type: "thinking", thinking: plan.thinking.join(""), signature: plan.signature });
  if (plan.text.length > 0) content.push({ type: "text", text: plan.text.join("") });
  plan.toolCalls.forEach((c, i) =>
    content.push({ type: "tool_use", id: toolId(ctx, i), name: c.name, input: c.input }),
  );
  const body: Record<string, unknown> = {
    id: `msg_sim${ctx.seq}`,
    type: "message",
    role: "assistant",
    model: plan.model,
    content,
    stop_reason: STOP_REASON[plan.stop],
    stop_sequence: plan.stopSequence,
  };
  if (plan.refusal) body.stop_details = REFUSAL_DETAILS;
  body.usage = usage(plan, output(plan));
  return JSON.stringify(body);
}

/**
 * The event stream of docs/protocols.md §1.7: `event:` line = JSON `type`; message_start (real
 * input_tokens, placeholder output_tokens 1), per block start/deltas/stop, a ping after the first
 * content_block_start, message_delta with cumulative usage, message_stop.
 */
export function messagesStream(plan: ReplyPlan, ctx: RenderContext): StreamPlan {
  const frames: string[] = [];
  const deltaAt: number[] = [];
  const emit = (data: { type: string; [key: string]: unknown }, delta = false) => {
    if (delta) deltaAt.push(frames.length);
    frames.push(formatSSE({ event: data.type, data: JSON.stringify(data) }));
  };
  const start = {
    id: `msg_sim${ctx.seq}`,
    type: "message",
    role: "assistant",
    model: plan.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  emit({ type: "message_start", message: { ...start, usage: usage(plan, 1) } });
  let index = 0;
  const open = (block: unknown) => {
    emit({ type: "content_block_start", index, content_block: block });
    if (index === 0) emit({ type: "ping" });
  };
  const close = () => emit({ type: "content_block_stop", index: index++ });
  // A reply without blocks (refusal, empty text) still pings after message_start (recorded anthropic-refusal).
  if (plan.thinking.length + plan.text.length + plan.toolCalls.length === 0) emit({ type: "ping" });
  if (plan.thinking.length > 0) {
    open({ type: "thinking", thinking: "" });
    for (const t of plan.thinking)
      emit({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: t } }, true);
    emit({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: plan.signature } });
    close();
  }
  if (plan.text.length > 0) {
    open({ type: "text", text: "" });
    for (const t of plan.text)
      emit({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } }, true);
    close();
  }
  plan.toolCalls.forEach((c, i) => {
    open({ type: "tool_use", id: toolId(ctx, i), name: c.name, input: {} });
    // The first fragment is "" (recorded streams); a call without arguments sends only that.
    const fragments = c.json === "{}" ? [""] : ["", ...splitEvenly(c.json, 3)];
    for (const f of fragments)
      emit({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: f } }, true);
    close();
  });
  const delta: Record<string, unknown> = { stop_reason: STOP_REASON[plan.stop], stop_sequence: plan.stopSequence };
  if (plan.refusal) delta.stop_details = REFUSAL_DETAILS;
  const { cache_creation: _, service_tier: __, ...finalUsage } = usage(plan, output(plan));
  // Bedrock-style proxies send only output_tokens in message_delta (docs/protocols.md §1.7, §4.9 #5).
  const deltaUsage = plan.variant === "no-input-in-delta" ? { output_tokens: output(plan) } : finalUsage;
  emit({ type: "message_delta", delta, usage: deltaUsage });
  emit({ type: "message_stop" });
  return withMidstream(frames, deltaAt, plan.midstream, [
    formatSSE({ event: "error", data: JSON.stringify(OVERLOADED) }),
  ]);
}
