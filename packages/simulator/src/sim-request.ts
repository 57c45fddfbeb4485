import type { Protocol } from "./simulator-options";

/** A tool the request offers: its name and the JSON Schema of its input. */
export interface ToolSpec {
  name: string;
  schema: unknown;
}

export type ToolChoice = { kind: "auto" } | { kind: "none" } | { kind: "required" } | { kind: "named"; name: string };

/**
 * How the reply may think. `off`: never; `hidden`: thought tokens are counted but no thought text
 * is shown (generateContent without includeThoughts); `visible`: thought text is sent.
 */
export type ThinkingMode = "off" | "hidden" | "visible";

/** What the simulator needs from a request, whatever its protocol. */
export interface SimRequest {
  protocol: Protocol;
  model: string;
  stream: boolean;
  /** Chat `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The chat family's `service_tier` that serves the request (its reply names it). */
  serviceTier?: string;
  /** Text of the trailing user turn (user messages, plus tool results), where directives live. */
  turnText: string;
  /**
   * The conversation ends with the user's side (system messages aside), not with an assistant
   * prefill: the case in which a model with tools may decide to call one.
   */
  userLast: boolean;
  /** Tool results of the trailing user turn, when it has any. */
  toolResult?: { name: string; text: string };
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  /** false when the request allows at most one tool call (disable_parallel_tool_use, parallel_tool_calls:false). */
  parallelTools: boolean;
  maxTokens?: number;
  stopSequences: string[];
  thinking: ThinkingMode;
  /**
   * Structured output was asked for: a JSON object, valid against `schema` when there is one
   * (chat `response_format`, messages `output_config.format`, generateContent `responseJsonSchema`).
   */
  json?: { schema?: unknown };
  /** What a Responses reply depends on beyond the plan (see render-responses.ts). */
  responses?: { encryptedReasoning: boolean; echo: Record<string, unknown>; customTools?: readonly string[] };
}

/** A request the real vendor would refuse with a 400: its message, and the chat protocol's param/code. */
export interface RequestProblem {
  problem: string;
  param?: string | null;
  code?: string | null;
}

export function isProblem(v: SimRequest | RequestProblem): v is RequestProblem {
  return "problem" in v;
}
