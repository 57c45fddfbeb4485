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
