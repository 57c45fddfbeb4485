import type { TokenUsage } from "./meter";

/** Messages-format usage (JSON reply, `message_start` or `message_delta`) in the meter's terms. */
export function messagesUsageToTokens(usage: unknown): Partial<TokenUsage> {
  const u = (usage ?? {}) as Record<string, unknown>;
  const out: Partial<TokenUsage> = {};
  if (typeof u.input_tokens === "number") out.input_tokens = u.input_tokens;
  if (typeof u.output_tokens === "number") out.output_tokens = u.output_tokens;
  if (typeof u.cache_read_input_tokens === "number") out.cache_read_input_tokens = u.cache_read_input_tokens;
  if (typeof u.cache_creation_input_tokens === "number") out.cache_creation_input_tokens = u.cache_creation_input_tokens;
  const details = u.output_tokens_details as { thinking_tokens?: unknown } | undefined;
  if (typeof details?.thinking_tokens === "number") out.reasoning_tokens = details.thinking_tokens;
  return out;
}

/** Chat-completions usage in the meter's terms (wire-formats.md §4.4, C→M). */
export function chatUsageToTokens(usage: unknown): TokenUsage {
  const u = (usage ?? {}) as {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  };
  const cacheRead = u.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = u.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (u.prompt_tokens ?? 0) - cacheRead - cacheWrite),
    output_tokens: u.completion_tokens ?? 0,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
    reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
