/**
 * The pivot reply → a generateContent reply for a client of that format (docs/protocols.md §6.3):
 * one candidate whose parts are the reply's thoughts (`thought: true`), text and function calls
 * (with their ids), its `finishReason`, `usageMetadata` and `modelVersion` (the catalog id).
 */
import type {
  ContentBlock,
  GenerateReplyPart,
  GenerateResponse,
  GenerateUsageMetadata,
  MessagesUsage,
  StopReason,
} from "@turnpike/schema";
import { encodeThoughtToken, type ThoughtBlock } from "./thought-token.js";

/** The pivot's stop reason in the format's words (a function call ends with `STOP` there too). */
export function generateFinishReason(reason: StopReason | null | undefined): string {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "MAX_TOKENS";
    case "refusal":
      return "SAFETY";
    case "end_turn":
    case "stop_sequence":
    case "tool_use":
    case "pause_turn":
    case null:
    case undefined:
      return "STOP";
    default: {
      const never: never = reason;
      return never;
    }
  }
}

/**
 * Pivot usage → `usageMetadata`: the prompt counts cached tokens too; thoughts are counted apart
 * from the candidates' tokens, as the format does (the pivot's output includes them).
 */
export function generateUsage(
  u: Pick<
    MessagesUsage,
    | "input_tokens"
    | "output_tokens"
    | "cache_read_input_tokens"
    | "cache_creation_input_tokens"
    | "output_tokens_details"
  > & { reasoning_tokens?: number },
): GenerateUsageMetadata {
  const cached = u.cache_read_input_tokens ?? 0;
  const prompt = u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0);
  // A reply states the share as `output_tokens_details`; a stream's running totals as `reasoning_tokens`.
  const thoughts = Math.min(u.output_tokens_details?.thinking_tokens ?? u.reasoning_tokens ?? 0, u.output_tokens);
  const candidates = u.output_tokens - thoughts;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + u.output_tokens,
    ...(cached ? { cachedContentTokenCount: cached } : {}),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
  };
}

/** One pivot content block as a part (none for blocks the format has no part for). */
export function generatePart(b: ContentBlock): GenerateReplyPart | undefined {
  switch (b.type) {
    case "text":
      return { text: b.text };
    case "thinking":
      return b.thinking ? { text: b.thinking, thought: true } : undefined;
    case "tool_use":
      return { functionCall: { id: b.id, name: b.name, args: (b.input ?? {}) as Record<string, unknown> } }; // tool input is a JSON object by the pivot's schema
    default:
      return undefined;
  }
}

/** A block a messages upstream wants back with the turn's tool calls: signed or redacted thinking. */
export function thoughtBlock(b: ContentBlock): ThoughtBlock | undefined {
  if (b.type === "thinking" && b.signature) return { type: "thinking", thinking: b.thinking, signature: b.signature };
  if (b.type === "redacted_thinking") return { type: "redacted_thinking", data: b.data };
  return undefined;
}

/**
 * @example
 * ```ts
 * const body = convertMessagesResponseToGenerate(pivotReply, { model: "alpha-sonnet-4-6" });
 * body.candidates[0].finishReason; // "STOP"
 * ```
 */
export function convertMessagesResponseToGenerate(
  res: { id: string; content: ContentBlock[]; stop_reason: StopReason | null; usage: MessagesUsage },
  ctx: { model: string },
): GenerateResponse {
  const parts = res.content.flatMap((b) => generatePart(b) ?? []);
  // The turn's signed thinking rides on its first function call, to come back with it (§6.6).
  const token = encodeThoughtToken(res.content.flatMap((b) => thoughtBlock(b) ?? []));
  const call = parts.find((p) => p.functionCall);
  if (token && call) call.thoughtSignature = token;
  return {
    candidates: [
      {
        content: { role: "model", parts: parts.length ? parts : [{ text: "" }] },
        finishReason: generateFinishReason(res.stop_reason),
        index: 0,
      },
    ],
    usageMetadata: generateUsage(res.usage),
    modelVersion: ctx.model,
    responseId: res.id,
  };
}
