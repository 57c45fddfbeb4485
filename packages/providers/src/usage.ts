/**
 * Usage mapping between the three protocols (docs/protocols.md §4.4). The common currency is
 * {@link UsageTotals}: messages-format semantics, where `input_tokens` is the *uncached* input
 * and `output_tokens` includes reasoning.
 */
import type { ChatUsage, MessagesUsage } from "@turnpike/schema";

/** Final token counts of one call, as the gateway bills them. */
export interface UsageTotals {
  /** Uncached input tokens. Total input = input + cache_read + cache_creation. */
  input_tokens: number;
  /** Output tokens, reasoning included. */
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /**
   * The share of `cache_creation_input_tokens` written for an hour (the rest for five minutes),
   * when the upstream says: the two are priced apart (docs/protocols.md §1.6).
   */
  cache_creation_1h_input_tokens?: number;
  /** Reasoning/thinking share of `output_tokens`, when the upstream says. */
  reasoning_tokens?: number;
  /** True when the upstream never reported usage and these numbers are local estimates. */
  estimated?: boolean;
}

/** Called once when a stream ends (or is cancelled) with its final usage. */
export type OnUsage = (usage: UsageTotals) => void;

function n(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

function obj(v: unknown): Record<string, unknown> {
  // A non-null object: reading any of its fields as `unknown` is safe.
  return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
}

/**
 * Chat usage → totals. `prompt_tokens` includes cached tokens; `completion_tokens` includes
 * reasoning (docs/protocols.md §2.5). DeepSeek's `prompt_cache_hit_tokens` counts as a cache read.
 */
export function chatUsageToTotals(usage: unknown): UsageTotals {
  const u = obj(usage);
  const prompt = obj(u.prompt_tokens_details);
  const completion = obj(u.completion_tokens_details);
  const cacheRead = n(prompt.cached_tokens) || n(u.prompt_cache_hit_tokens);
  const cacheWrite = n(prompt.cache_write_tokens);
  const out: UsageTotals = {
    input_tokens: Math.max(0, n(u.prompt_tokens) - cacheRead - cacheWrite),
    output_tokens: n(u.completion_tokens),
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
  if (completion.reasoning_tokens !== undefined) out.reasoning_tokens = n(completion.reasoning_tokens);
  return out;
}

/**
 * generateContent `usageMetadata` → totals. `promptTokenCount` includes the cached part;
 * `candidatesTokenCount` excludes thoughts, so billable output adds `thoughtsTokenCount`
 * (docs/protocols.md §3.5). Tool-use prompt tokens are input.
 */
export function generateUsageToTotals(usageMetadata: unknown): UsageTotals {
  const u = obj(usageMetadata);
  const cached = n(u.cachedContentTokenCount);
  const thoughts = n(u.thoughtsTokenCount);
  const out: UsageTotals = {
    input_tokens: Math.max(0, n(u.promptTokenCount) + n(u.toolUsePromptTokenCount) - cached),
    output_tokens: n(u.candidatesTokenCount) + thoughts,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
  if (u.thoughtsTokenCount !== undefined) out.reasoning_tokens = thoughts;
  return out;
}

/**
 * The fields a messages-format usage object carries (a reply, `message_start` or
 * `message_delta`), each only if present: a closing `message_delta` may leave out the input side,
 * which must then stand as it was (docs/protocols.md §1.7). The one reader of messages usage.
 */
export function messagesUsageFields(usage: unknown): Partial<UsageTotals> {
  const u = obj(usage);
  const out: Partial<UsageTotals> = {};
  if (typeof u.input_tokens === "number") out.input_tokens = n(u.input_tokens);
  if (typeof u.output_tokens === "number") out.output_tokens = n(u.output_tokens);
  if (typeof u.cache_read_input_tokens === "number") out.cache_read_input_tokens = n(u.cache_read_input_tokens);
  if (typeof u.cache_creation_input_tokens === "number")
    out.cache_creation_input_tokens = n(u.cache_creation_input_tokens);
  const byTtl = obj(u.cache_creation);
  // Only a share to price apart: zero one-hour writes leave the field out.
  if (n(byTtl.ephemeral_1h_input_tokens) > 0) out.cache_creation_1h_input_tokens = n(byTtl.ephemeral_1h_input_tokens);
  const details = obj(u.output_tokens_details);
  if (details.thinking_tokens !== undefined) out.reasoning_tokens = n(details.thinking_tokens);
  return out;
}

/** Messages usage (reply or `message_delta`) → totals; an absent field is 0. */
export function messagesUsageToTotals(usage: unknown): UsageTotals {
  const f = messagesUsageFields(usage);
  const out: UsageTotals = {
    input_tokens: f.input_tokens ?? 0,
    output_tokens: f.output_tokens ?? 0,
    cache_read_input_tokens: f.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: f.cache_creation_input_tokens ?? 0,
  };
  if (f.cache_creation_1h_input_tokens !== undefined)
    out.cache_creation_1h_input_tokens = f.cache_creation_1h_input_tokens;
  if (f.reasoning_tokens !== undefined) out.reasoning_tokens = f.reasoning_tokens;
  return out;
}

/** Totals → the messages-format `usage` object. */
export function totalsToMessagesUsage(t: UsageTotals): MessagesUsage {
  const out: MessagesUsage = {
    input_tokens: t.input_tokens,
    output_tokens: t.output_tokens,
    cache_creation_input_tokens: t.cache_creation_input_tokens,
    cache_read_input_tokens: t.cache_read_input_tokens,
  };
  // The per-TTL split of the writes, when there are any (§1.6).
  if (t.cache_creation_input_tokens > 0) {
    const hour = Math.min(t.cache_creation_1h_input_tokens ?? 0, t.cache_creation_input_tokens);
    out.cache_creation = {
      ephemeral_5m_input_tokens: t.cache_creation_input_tokens - hour,
      ephemeral_1h_input_tokens: hour,
    };
  }
  if (t.reasoning_tokens !== undefined) out.output_tokens_details = { thinking_tokens: t.reasoning_tokens };
  return out;
}

/**
 * Totals → the chat-format `usage` object: prompt = input + cache read + cache write;
 * `cached_tokens` = cache read; `total_tokens` = prompt + completion (docs/protocols.md §4.4).
 */
export function totalsToChatUsage(t: UsageTotals): ChatUsage {
  const prompt = t.input_tokens + t.cache_read_input_tokens + t.cache_creation_input_tokens;
  const out: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: t.output_tokens,
    total_tokens: prompt + t.output_tokens,
    prompt_tokens_details: { cached_tokens: t.cache_read_input_tokens },
  };
  if (t.reasoning_tokens !== undefined) out.completion_tokens_details = { reasoning_tokens: t.reasoning_tokens };
  return out;
}

/** Messages usage → chat usage in one step. */
export function messagesUsageToChat(usage: MessagesUsage): ChatUsage {
  return totalsToChatUsage(messagesUsageToTotals(usage));
}

/** Chat usage → messages usage in one step. */
export function chatUsageToMessages(usage: unknown): MessagesUsage {
  return totalsToMessagesUsage(chatUsageToTotals(usage));
}

/** generateContent usage → messages usage in one step. */
export function generateUsageToMessages(usageMetadata: unknown): MessagesUsage {
  return totalsToMessagesUsage(generateUsageToTotals(usageMetadata));
}
