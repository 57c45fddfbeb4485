import { formatSSE } from "@turnpike/schema/sse";
import { runningTokens, thinkingSignature, type ReplyPlan, type StopKind } from "./plan-reply";
import { withMidstream, type RenderContext, type StreamPlan } from "./stream-plan";

const FINISH_REASON: Record<StopKind, string> = {
  end: "STOP",
  stop_sequence: "STOP",
  tool_use: "STOP", // there is no tool-call finish reason (docs/protocols.md §3.4)
  max_tokens: "MAX_TOKENS",
  refusal: "SAFETY",
};
const OVERLOADED = {
  error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" },
};
const BLOCKED_RATING = [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", probability: "HIGH", blocked: true }];

interface Counts {
  candidates: number;
  thoughts: number;
}

function usageMetadata(plan: ReplyPlan, c: Counts) {
  const u: Record<string, unknown> = {
    promptTokenCount: plan.inputTokens,
    candidatesTokenCount: c.candidates,
    totalTokenCount: plan.inputTokens + c.candidates + c.thoughts,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: plan.inputTokens }],
  };
  if (plan.thinkingTokens > 0) u.thoughtsTokenCount = c.thoughts;
  // Part of promptTokenCount, as the vendor reports it (docs/protocols.md §3.5).
  if (plan.cache?.read) u.cachedContentTokenCount = plan.cache.read;
  return u;
}

const finalCounts = (plan: ReplyPlan): Counts => ({
  candidates: plan.outputTokens - plan.thinkingTokens,
  thoughts: plan.thinkingTokens,
});
const signature = (plan: ReplyPlan) => plan.signature || thinkingSignature(0);

function functionCallParts(plan: ReplyPlan): unknown[] {
  // Gemini sends the whole call in one part, without an id; the first call of a turn carries
  // the thought signature (docs/protocols.md §3.6, §3.7).
  return plan.toolCalls.map((c, i) =>
    i === 0
      ? { functionCall: { name: c.name, args: c.input }, thoughtSignature: signature(plan) }
      : { functionCall: { name: c.name, args: c.input } },
  );
}

function envelope(plan: ReplyPlan, ctx: RenderContext, candidate: unknown, counts: Counts): string {
  return JSON.stringify({
    candidates: [candidate],
    usageMetadata: usageMetadata(plan, counts),
    modelVersion: plan.model,
    responseId: `sim${ctx.seq}`,
  });
}

/** A prompt blocked before generation: no candidates, `promptFeedback.blockReason` (§3.3). */
function blockedPrompt(plan: ReplyPlan, ctx: RenderContext): string {
  return JSON.stringify({
    promptFeedback: { blockReason: "SAFETY", safetyRatings: BLOCKED_RATING },
    usageMetadata: { promptTokenCount: plan.inputTokens, totalTokenCount: plan.inputTokens },
    modelVersion: plan.model,
    responseId: `sim${ctx.seq}`,
  });
}

/** The non-streaming reply body (docs/protocols.md §3.3). */
export function generateJson(plan: ReplyPlan, ctx: RenderContext): string {
  if (plan.refusal === "prompt") return blockedPrompt(plan, ctx);
  if (plan.refusal)
    return envelope(plan, ctx, { finishReason: "SAFETY", index: 0, safetyRatings: BLOCKED_RATING }, finalCounts(plan));
  const parts: unknown[] = [];
  if (plan.thinking.length > 0 && plan.showThinking) parts.push({ text: plan.thinking.join(""), thought: true });
  if (plan.text.length > 0) parts.push({ text: plan.text.join("") });
  parts.push(...functionCallParts(plan));
  if (parts.length === 0) parts.push({ text: "" });
  const candidate: Record<string, unknown> = {
    content: { parts, role: "model" },
    finishReason: FINISH_REASON[plan.stop],
    index: 0,
  };
  if (plan.toolCalls.length > 0) candidate.finishMessage = "Model generated function call(s).";
  return envelope(plan, ctx, candidate, finalCounts(plan));
}

/** The JSON events of a streamed reply, and the indexes of its content events. */
function streamEvents(plan: ReplyPlan, ctx: RenderContext): { events: string[]; deltaAt: number[] } {
  const events: string[] = [];
  const deltaAt: number[] = [];
  if (plan.refusal === "prompt") return { events: [blockedPrompt(plan, ctx)], deltaAt };
  const counts: Counts = { candidates: 0, thoughts: plan.showThinking ? 0 : plan.thinkingTokens };
  const part = (p: unknown) => {
    deltaAt.push(events.length);
    events.push(envelope(plan, ctx, { content: { parts: [p], role: "model" }, index: 0 }, counts));
  };
  // usageMetadata is cumulative on every event (§3.6): tokens of what was sent so far.
  const running = runningTokens(plan);
  if (plan.showThinking) {
    plan.thinking.forEach((t, i) => {
      counts.thoughts = running.thinking[i]!;
      part({ text: t, thought: true });
    });
  }
  counts.thoughts = plan.thinkingTokens;
  plan.text.forEach((t, i) => {
    counts.candidates = running.text[i]!;
    part({ text: t });
  });
  if (plan.toolCalls.length > 0) {
    Object.assign(counts, finalCounts(plan));
    deltaAt.push(events.length);
    events.push(envelope(plan, ctx, { content: { parts: functionCallParts(plan), role: "model" }, index: 0 }, counts));
  }
  // The last event: finishReason with an empty text part (recorded google-text.chunks.txt).
  const last = plan.refusal
    ? { finishReason: "SAFETY", index: 0, safetyRatings: BLOCKED_RATING }
    : { content: { parts: [{ text: "" }], role: "model" }, finishReason: FINISH_REASON[plan.stop], index: 0 };
  events.push(envelope(plan, ctx, last, finalCounts(plan)));
  return { events, deltaAt };
}

/**
 * A streamed reply. With `alt=sse`: `data: <json>` events framed with CRLF, no `event:` line and no
 * terminator (§3.6). Without it: one JSON array written incrementally.
 */
export function generateStream(plan: ReplyPlan, ctx: RenderContext, sse: boolean): StreamPlan {
  const { events, deltaAt } = streamEvents(plan, ctx);
  const error = JSON.stringify(OVERLOADED);
  if (sse) {
    // Real servers end lines with CRLF (§3.6); JSON text holds no raw newline, so only the framing changes.
    const frame = (json: string) => formatSSE({ data: json }).replaceAll("\n", "\r\n");
    return withMidstream(events.map(frame), deltaAt, plan.midstream, [frame(error)]);
  }
  const frames = events.map((e, i) => (i === 0 ? `[${e}` : `,\r\n${e}`));
  frames.push("]");
  return withMidstream(frames, deltaAt, plan.midstream, [`,\r\n${error}]`]);
}
