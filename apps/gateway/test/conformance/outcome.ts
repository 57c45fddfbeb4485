import { countTokens } from "@turnpike/providers";
import type { MessagesRequest } from "@turnpike/schema";

/**
 * The client-visible result of one call, in a shape both client formats reduce to, so that a JSON
 * reply, a stream rebuilt event by event, and the expectation of a scenario compare with one
 * `toEqual`.
 */

export interface ToolCallOutcome {
  id: string;
  name: string;
  /** The arguments parsed: messages `input`, chat `JSON.parse(function.arguments)`. */
  args: unknown;
}

export interface UsageOutcome {
  /** messages `input_tokens` (+ cache fields, all 0 here) / chat `prompt_tokens`. */
  input: number;
  /** messages `output_tokens` / chat `completion_tokens`. */
  output: number;
  /** The thinking share of `output` when the reply states it (> 0): messages `output_tokens_details.thinking_tokens`, chat `completion_tokens_details.reasoning_tokens`. */
  reasoning?: number;
}

export interface Outcome {
  /** messages: the text blocks joined; chat: `message.content` (null when the reply has no text). */
  text: string | null;
  /** messages: the thinking blocks joined; chat: `reasoning_content`. "" when none. */
  thinking: string;
  /** messages only: the `signature` of each thinking block. */
  signatures?: string[];
  /** messages only: the kind of each content block, in order. */
  blocks?: string[];
  toolCalls: ToolCallOutcome[];
  /** messages `stop_reason` / chat `finish_reason`. */
  stop: string | null;
  /** messages only. */
  stopSequence?: string | null;
  usage: UsageOutcome;
}

/** A stream that ended with an in-band error instead of its terminal event. */
export interface StreamError {
  /** messages `error.type` / chat `error.type`. */
  type: string;
  /** chat only: `error.code`. */
  code?: string | null;
  message: string;
}

/**
 * Replaces tool-call ids by their position: two calls of the same scenario never share ids (the
 * simulator numbers them per request, and Turnpike generates fresh ones for generateContent), so
 * only the ids are normalized when a stream is compared with a JSON reply.
 */
export function withoutIds(o: Outcome): Outcome {
  return { ...o, toolCalls: o.toolCalls.map((c, i) => ({ ...c, id: `#${i}` })) };
}

/** A value a test reads as a loose record: a parsed reply, or a body the simulator received. */
export function asRecord(v: unknown): Record<string, any> {
  return v as Record<string, any>; // wire data under test: every field read is asserted
}

/** Parses a JSON text into a loose record (the wire shapes are checked field by field). */
export function parseRecord(text: string): Record<string, any> {
  return asRecord(JSON.parse(text));
}

/** A reply body as a loose record. */
export async function readJson(res: Response): Promise<Record<string, any>> {
  return parseRecord(await res.text());
}

/**
 * Turnpike's local count of a messages-format request body (the tokenizer it uses before an
 * upstream has said anything: `message_start` on translated streams, count_tokens for chat upstreams).
 */
export function localCount(body: Record<string, unknown>): number {
  return countTokens(body as unknown as MessagesRequest); // written by the test to the messages-format schema, which the gateway validates
}
