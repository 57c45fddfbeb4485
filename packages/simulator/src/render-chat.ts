import { formatSSE } from "@turnpike/schema/sse";
import { splitEvenly } from "./build-reply-text";
import { countTextTokens } from "./count-text-tokens";
import type { ReplyPlan, StopKind } from "./plan-reply";
import { withMidstream, type RenderContext, type StreamPlan } from "./stream-plan";

const FINISH_REASON: Record<StopKind, string> = {
  end: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};
const SERVER_ERROR = {
  error: {
    message: "The server had an error while processing your request. Sorry about that!",
    type: "server_error",
    param: null,
    code: null,
  },
};
const FINGERPRINT = "fp_sim";

/** Real-world stream variants of docs/protocols.md §2.6 and §4.9. */
export const CHAT_VARIANTS = [
  "whole-tool-call",
  "usage-every-chunk",
  "finish-with-content",
  "prompt-filter-first",
  "no-usage",
  "tool-index-1",
  "interleaved-tools",
  "empty-tool-calls",
  "usage-in-finish",
] as const;

// Azure OpenAI's prompt-filter chunk: no choices, empty id, sent before the first real chunk.
const SAFE = { filtered: false, severity: "safe" };
const PROMPT_FILTER_CHUNK = {
  choices: [],
  created: 0,
  id: "",
  model: "",
  object: "",
  prompt_filter_results: [
    { prompt_index: 0, content_filter_results: { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE } },
  ],
};

const callId = (ctx: RenderContext, i: number) => `call_sim${ctx.seq}_${i}`;

function usage(prompt: number, completion: number, reasoning: number, cached = 0) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    // The cached part is included in prompt_tokens (docs/protocols.md §2.5).
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The non-streaming reply body (docs/protocols.md §2.4). */
export function chatJson(plan: ReplyPlan, ctx: RenderContext, serviceTier = "default"): string {
  const message: Record<string, unknown> = {
    role: "assistant",
    content: plan.text.length > 0 ? plan.text.join("") : null,
  };
  // DeepSeek-style reasoning text (docs/protocols.md §2.10); OpenAI itself sends none.
  if (plan.thinking.length > 0) message.reasoning_content = plan.thinking.join("");
  message.refusal = null;
  message.annotations = [];
  if (plan.toolCalls.length > 0) {
    message.tool_calls = plan.toolCalls.map((c, i) => ({
      id: callId(ctx, i),
      type: "function",
      function: { name: c.name, arguments: c.json },
    }));
  }
  return JSON.stringify({
    id: `chatcmpl-sim${ctx.seq}`,
    object: "chat.completion",
    created: ctx.created,
    model: plan.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH_REASON[plan.stop] }],
    usage: usage(plan.inputTokens, plan.outputTokens, plan.thinkingTokens, plan.cache?.read),
    service_tier: serviceTier,
    system_fingerprint: FINGERPRINT,
  });
}

/** One delta of the stream, before it is wrapped in a chunk. */
interface Delta {
  delta: Record<string, unknown>;
  /** Output generated up to and including this delta, for `usage-every-chunk`. */
  text: string;
  content?: boolean;
}

function deltas(plan: ReplyPlan, ctx: RenderContext): Delta[] {
  const v = plan.variant;
  const out: Delta[] = [];
  let so = "";
  const first: Record<string, unknown> = {
    role: "assistant",
    content: plan.text.length > 0 || plan.thinking.length > 0 ? "" : null,
    refusal: null,
  };
  out.push({ delta: first, text: so });
  for (const t of plan.thinking) out.push({ delta: { reasoning_content: t }, text: (so += t), content: true });
  for (const t of plan.text) {
    const delta: Record<string, unknown> = { content: t };
    // vLLM-style empty `tool_calls: []` beside content (docs/protocols.md §4.9 #2).
    if (v === "empty-tool-calls") delta.tool_calls = [];
    out.push({ delta, text: (so += t), content: true });
  }
  const base = v === "tool-index-1" ? 1 : 0;
  const opener = (i: number, args: string) => ({
    tool_calls: [
      {
        index: base + i,
        id: callId(ctx, i),
        type: "function",
        function: { name: plan.toolCalls[i]!.name, arguments: args },
      },
    ],
  });
  const fragment = (i: number, args: string) => ({ tool_calls: [{ index: base + i, function: { arguments: args } }] });
  if (v === "whole-tool-call") {
    plan.toolCalls.forEach((c, i) => out.push({ delta: opener(i, c.json), text: (so += c.json), content: true }));
  } else if (v === "interleaved-tools") {
    const frags = plan.toolCalls.map((c) => splitEvenly(c.json, 3));
    plan.toolCalls.forEach((_, i) => out.push({ delta: opener(i, ""), text: so }));
    for (let k = 0; frags.some((f) => k < f.length); k++) {
      frags.forEach((f, i) => {
        if (k < f.length) out.push({ delta: fragment(i, f[k]!), text: (so += f[k]!), content: true });
      });
    }
  } else {
    plan.toolCalls.forEach((c, i) => {
      out.push({ delta: opener(i, ""), text: so });
      for (const f of splitEvenly(c.json, 3)) out.push({ delta: fragment(i, f), text: (so += f), content: true });
    });
  }
  return out;
}

/**
 * The chunk stream of docs/protocols.md §2.6: role chunk, content (or reasoning, tool-call) chunks,
 * a finish chunk with `delta:{}`, the `choices:[]` usage chunk only with include_usage (every
 * earlier chunk then has `usage:null`), `data: [DONE]`. Same id and created on every chunk.
 */
export function chatStream(
  plan: ReplyPlan,
  ctx: RenderContext,
  includeUsage: boolean,
  serviceTier = "default",
): StreamPlan {
  const v = plan.variant;
  const id = `chatcmpl-sim${ctx.seq}`;
  // Every recorded chunk carries service_tier and system_fingerprint, as the JSON reply does (openai-text.chunks.txt).
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${JSON.stringify(ctx.created)},"model":${JSON.stringify(plan.model)},"service_tier":${JSON.stringify(serviceTier)},"system_fingerprint":"${FINGERPRINT}",`;
  const withUsage = v !== "no-usage" && (includeUsage || v === "usage-in-finish" || v === "usage-every-chunk");
  const finalUsage = usage(plan.inputTokens, plan.outputTokens, plan.thinkingTokens, plan.cache?.read);
  const frames: string[] = [];
  const deltaAt: number[] = [];
  const chunk = (choice: unknown, usageValue: unknown, content = false) => {
    if (content) deltaAt.push(frames.length);
    const tail = withUsage ? `,"usage":${JSON.stringify(usageValue)}}` : "}";
    frames.push(formatSSE({ data: `${head}"choices":[${JSON.stringify(choice)}]${tail}` }));
  };
  const running = (text: string) =>
    v === "usage-every-chunk" ? usage(plan.inputTokens, countTextTokens(text), 0) : null;
  // The chunk that carries finish_reason also carries the totals in these two variants.
  const finishUsage = v === "usage-every-chunk" || v === "usage-in-finish" ? finalUsage : null;
  if (v === "prompt-filter-first") frames.push(formatSSE({ data: JSON.stringify(PROMPT_FILTER_CHUNK) }));
  const ds = deltas(plan, ctx);
  const finish = FINISH_REASON[plan.stop];
  const finishOnLast = v === "finish-with-content" && ds.length > 1;
  ds.forEach((d, i) => {
    const last = finishOnLast && i === ds.length - 1;
    chunk(
      { index: 0, delta: d.delta, logprobs: null, finish_reason: last ? finish : null },
      last ? finishUsage : running(d.text),
      d.content,
    );
  });
  if (!finishOnLast) chunk({ index: 0, delta: {}, logprobs: null, finish_reason: finish }, finishUsage);
  if (withUsage && includeUsage && v !== "usage-in-finish") {
    frames.push(formatSSE({ data: `${head}"choices":[],"usage":${JSON.stringify(finalUsage)}}` }));
  }
  frames.push(formatSSE({ data: "[DONE]" }));
  const errorFrames = [formatSSE({ data: JSON.stringify(SERVER_ERROR) }), formatSSE({ data: "[DONE]" })];
  return withMidstream(frames, deltaAt, plan.midstream, errorFrames);
}
