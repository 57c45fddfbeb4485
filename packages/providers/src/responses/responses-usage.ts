/**
 * Responses usage → the chat usage it equals: both count the cached part inside the input and
 * the reasoning inside the output (docs/protocols.md §5.2), so one reader serves both.
 */
import { isRecord } from "../json.js";
import { chatUsageToTotals, type UsageTotals } from "../usage.js";

/** A Responses `usage` object in chat terms (fields missing or malformed read as absent). */
export function responsesUsageToChat(usage: unknown): Record<string, unknown> {
  const u = isRecord(usage) ? usage : {};
  const input = isRecord(u.input_tokens_details) ? u.input_tokens_details : {};
  const output = isRecord(u.output_tokens_details) ? u.output_tokens_details : {};
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    prompt_tokens_details: { cached_tokens: input.cached_tokens },
    ...(output.reasoning_tokens !== undefined
      ? { completion_tokens_details: { reasoning_tokens: output.reasoning_tokens } }
      : {}),
  };
}

/** A Responses `usage` object as the totals Turnpike bills. */
export function responsesUsageToTotals(usage: unknown): UsageTotals {
  return chatUsageToTotals(responsesUsageToChat(usage));
}
