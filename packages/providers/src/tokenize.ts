/**
 * Local token counting with gpt-tokenizer's `o200k_base` encoding. Vendors tokenize differently,
 * so these are estimates: used for rate limiting, for `message_start.usage.input_tokens` on
 * translated streams (chat and generateContent upstreams only report usage at the end), and as
 * the billing fallback when an upstream never reports usage (docs/protocols.md §4.4).
 *
 * Formula (README "countTokens"):
 *   3 (reply priming)
 *   + system text
 *   + per message: 3 (role framing) + its blocks
 *       text → its tokens; thinking → its text; redacted_thinking → data length / 4
 *       image → 1600 (the vendor resizes images to ~1.15 MP ≈ 1600 tokens, width·height / 750)
 *       document → title + text for text/content sources; PDFs 1600 per estimated page
 *                  (one page per 75 kB of decoded PDF, at least one)
 *       tool_use → name + JSON of input; tool_result → its content, recursively
 *       other (server-tool) blocks → their JSON
 *   + per tool: 8 + name + description + JSON of input_schema (server tools: their JSON)
 */
import type { ContentBlockParam, CountTokensRequest, MessagesRequest, ToolDefinition } from "@turnpike/schema";
import { isClientTool } from "./json.js";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";

export const IMAGE_TOKENS = 1600;
export const PDF_PAGE_TOKENS = 1600;
const PDF_BYTES_PER_PAGE = 75_000;
const REPLY_PRIMING = 3;
const PER_MESSAGE = 3;
const PER_TOOL = 8;

/** Special-token text (`<|endoftext|>`) in user content is counted as plain text, never rejected. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/**
 * Runs the encoder would take as one piece (letters, or punctuation) longer than this are
 * counted this many characters at a time: its merge loop is quadratic in a piece's length (64 KB
 * of one letter took 3 s, blocking every other request), sliced it is linear and the count stays
 * within a fraction of a percent.
 */
const MAX_PIECE = 256;
const LONG_PIECE = /[\p{L}\p{M}]{257,}|[^\s\p{L}\p{N}]{257,}/gu;

/** Tokens of a piece of text. */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length <= MAX_PIECE) return countO200k(text, PLAIN);
  let total = 0;
  let last = 0;
  for (const m of text.matchAll(LONG_PIECE)) {
    if (m.index > last) total += countO200k(text.slice(last, m.index), PLAIN);
    for (let i = 0; i < m[0].length; i += MAX_PIECE) total += countO200k(m[0].slice(i, i + MAX_PIECE), PLAIN);
    last = m.index + m[0].length;
  }
  return last === 0
    ? countO200k(text, PLAIN)
    : last < text.length
      ? total + countO200k(text.slice(last), PLAIN)
      : total;
}

/**
 * Characters of one request counted exactly; the rest is estimated at the rate (tokens per
 * character) measured on them. Counting is synchronous and costs up to ~0.5 ms per kilobyte of
 * varied text, so a 32 MB prompt counted whole held every other request up for seconds; a
 * quarter megabyte is a sample large enough for the rate, and bounds the pause.
 */
export const EXACT_COUNT_CHARS = 256 * 1024;

/**
 * Texts of one request counted exactly; those after them are estimated at the measured rate.
 * Each call to the encoder costs a few microseconds whatever its length, so a body of many short
 * texts (25,000 two-word turns: 270 KB, within the characters' budget) held the event loop for
 * 40–70 ms counting them one by one on a loaded machine; 4,096 texts are a sample large enough.
 */
export const EXACT_COUNT_TEXTS = 4096;

/** What is left of one request's exact counting (characters and texts), and the rate measured so far. */
interface Budget {
  left: number;
  texts: number;
  chars: number;
  tokens: number;
}

function countWithin(text: string, b: Budget): number {
  // Past the texts' budget: a fraction of a token (the sum is rounded up once, at the end).
  if (b.texts <= 0 && b.chars > 0) return text.length * (b.tokens / b.chars);
  b.texts--;
  if (text.length <= b.left) {
    const n = countTextTokens(text);
    b.left -= text.length;
    b.chars += text.length;
    b.tokens += n;
    return n;
  }
  let n = 0;
  let rest = text.length;
  if (b.left > 0) {
    const head = text.slice(0, b.left);
    n = countTextTokens(head);
    b.chars += head.length;
    b.tokens += n;
    rest -= head.length;
    b.left = 0;
  }
  // About 4 characters a token until anything has been measured.
  const rate = b.chars > 0 ? b.tokens / b.chars : 0.25;
  return n + Math.ceil(rest * rate);
}

/**
 * Estimated input tokens of a messages-format request (system, messages, tools).
 *
 * @example
 * ```ts
 * countTokens({ model: "m", max_tokens: 16, messages: [{ role: "user", content: "Hello" }] }); // 7
 * ```
 */
export function countTokens(request: MessagesRequest | CountTokensRequest): number {
  const budget: Budget = { left: EXACT_COUNT_CHARS, texts: EXACT_COUNT_TEXTS, chars: 0, tokens: 0 };
  const countTextTokens = (text: string) => countWithin(text, budget);
  let total = REPLY_PRIMING;
  const system = request.system;
  if (typeof system === "string") total += countTextTokens(system);
  else if (system) for (const b of system) total += countTextTokens(b.text);
  for (const m of request.messages) {
    total += PER_MESSAGE;
    if (typeof m.content === "string") total += countTextTokens(m.content);
    else for (const b of m.content) total += countBlock(b, countTextTokens);
  }
  for (const t of request.tools ?? []) total += countTool(t, countTextTokens);
  return Math.ceil(total);
}

function countBlock(b: ContentBlockParam, countTextTokens: (text: string) => number): number {
  switch (b.type) {
    case "text":
      return countTextTokens(b.text);
    case "image":
      return IMAGE_TOKENS;
    case "document": {
      const title = b.title ? countTextTokens(b.title) : 0;
      const s = b.source;
      if (s.type === "text") return title + countTextTokens(s.data);
      if (s.type === "content") {
        if (typeof s.content === "string") return title + countTextTokens(s.content);
        return title + s.content.reduce((sum, c) => sum + countBlock(c, countTextTokens), 0);
      }
      if (s.type === "base64") {
        const bytes = Math.floor((s.data.length * 3) / 4);
        return title + PDF_PAGE_TOKENS * Math.max(1, Math.ceil(bytes / PDF_BYTES_PER_PAGE));
      }
      return title + PDF_PAGE_TOKENS; // url / file: size unknown, one page
    }
    case "tool_use":
      return countTextTokens(b.name) + countTextTokens(JSON.stringify(b.input ?? {}));
    case "tool_result": {
      if (typeof b.content === "string") return countTextTokens(b.content);
      return (b.content ?? []).reduce((sum, c) => sum + countBlock(c, countTextTokens), 0);
    }
    case "thinking":
      return countTextTokens(b.thinking);
    case "redacted_thinking":
      return Math.ceil(b.data.length / 4);
    default:
      return countTextTokens(JSON.stringify(b));
  }
}

function countTool(t: ToolDefinition, countTextTokens: (text: string) => number): number {
  if (!isClientTool(t)) return countTextTokens(JSON.stringify(t));
  return (
    PER_TOOL +
    countTextTokens(t.name) +
    countTextTokens(t.description ?? "") +
    countTextTokens(JSON.stringify(t.input_schema))
  );
}
