/**
 * Chat request → the messages-format pivot (docs/design.md ("One request")). The pivot is a valid
 * request for a messages upstream as it stands (the gateway only strips `turnpike`); chat-only
 * parameters ride along in `turnpike.chat` so `convertMessagesRequestToChat` restores them.
 */
import type { ChatRequest, MessagesRequest, ThinkingConfig, TurnpikeChatParams } from "@turnpike/schema";
import type { Protocol } from "../errors.js";
import { invalidRequest } from "../errors.js";
import { EFFORT_TO_BUDGET } from "../thinking.js";
import { Warnings, type Warning } from "../warnings.js";
import { convertChatMessagesToMessages } from "./convert-chat-messages-to-messages.js";
import { convertChatToolsToMessages } from "./convert-chat-tools-to-messages.js";

export interface ChatToMessagesOptions {
  /** `max_tokens` when the client sent neither `max_completion_tokens` nor `max_tokens`. */
  defaultMaxTokens: number;
  /**
   * Where the pivot goes next (default `"messages"`). Only warnings depend on it: for
   * `"generate"`/`"chat"` the chat-only parameters are judged by the next converter, which can
   * carry some of them (seed, penalties…); and the messages-upstream sampling rules (temperature
   * 0–1, not with `top_p`, nothing but 1 with thinking) are applied only for `"messages"`.
   */
  target?: Protocol;
}

export interface ChatToMessagesResult {
  request: MessagesRequest;
  warnings: Warning[];
}

/** Chat parameters copied into `turnpike.chat` (each has the same type there). */
const CARRIED = [
  "seed",
  "response_format",
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "n",
  "user",
  "parallel_tool_calls",
  "reasoning_effort",
  "stream_options",
] as const satisfies readonly (keyof TurnpikeChatParams)[];

/** Fields read by this converter; any other top-level field gets a warning. */
const HANDLED = new Set<string>([
  ...CARRIED,
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "stop",
  "stream",
  "tools",
  "tool_choice",
  "functions",
  "function_call",
  "safety_identifier",
]);

/** Chat-only fields with no messages-format counterpart that are dropped with a warning. */
const NOT_CARRIED: Record<string, string> = {
  metadata: "stored-completion metadata is not sent to this upstream",
  store: "stored completions are not available through this upstream",
  modalities: "only text output is available through this upstream",
  audio: "audio output is not available through this upstream",
  prediction: "predicted outputs are not available through this upstream",
  service_tier: "service tiers are not carried to this upstream",
  verbosity: "verbosity is not carried to this upstream",
  web_search_options: "web search options are not carried to this upstream",
  prompt_cache_key: "prompt cache keys are not carried to this upstream",
};

/**
 * @example
 * ```ts
 * const { request, warnings } = convertChatRequestToMessages(
 *   { model: "m", messages: [{ role: "user", content: "Hi" }], seed: 7 },
 *   { defaultMaxTokens: 4096 },
 * );
 * // request.max_tokens === 4096, request.turnpike.chat.seed === 7, warnings[0].param === "seed"
 * ```
 */
export function convertChatRequestToMessages(req: ChatRequest, opts: ChatToMessagesOptions): ChatToMessagesResult {
  const target = opts.target ?? "messages";
  const toMessages = target === "messages";
  const w = new Warnings();

  const n = req.n ?? 1;
  if (n > 1 && target !== "chat") {
    throw invalidRequest(
      "n",
      `only n=1 is supported for this model (its upstream returns one choice per call), got ${n}`,
    );
  }

  const { system, messages } = convertChatMessagesToMessages(req.messages, w);
  const { tools, toolChoice } = convertChatToolsToMessages(req, w);

  const out: MessagesRequest = {
    model: req.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? opts.defaultMaxTokens,
    messages,
  };
  if (system !== undefined) out.system = system;
  if (req.stream != null) out.stream = req.stream;
  if (tools) out.tools = tools;
  if (toolChoice) out.tool_choice = toolChoice;

  // Sampling.
  if (req.temperature != null) {
    out.temperature = req.temperature;
    if (toMessages && req.temperature > 1) {
      // No official mapping between the ranges; clamping keeps every value ≤ 1 unchanged (§4.1).
      out.temperature = 1;
      w.add("temperature", `clamped from ${req.temperature} to 1 (this upstream accepts 0–1)`);
    }
  }
  if (req.top_p != null) {
    if (toMessages && out.temperature !== undefined) {
      // Many messages-format models answer 400 to temperature + top_p (§1.2, §4.9 trap 12).
      w.add("top_p", "dropped: this upstream does not accept temperature and top_p together; temperature was kept");
    } else {
      out.top_p = req.top_p;
    }
  }

  // Stop sequences.
  if (req.stop != null) {
    const list = typeof req.stop === "string" ? [req.stop] : req.stop;
    const kept = list.filter((s) => s.length > 0 && (!toMessages || s.trim().length > 0));
    if (kept.length < list.length)
      w.add("stop", "empty or whitespace-only stop sequences were dropped (this upstream rejects them)");
    if (kept.length > 0) out.stop_sequences = kept;
  }

  // End-user id.
  const user = req.user ?? req.safety_identifier;
  if (user) out.metadata = { user_id: user };

  // Structured output: json_schema has a counterpart; json_object does not.
  const rf = req.response_format;
  if (rf?.type === "json_schema") {
    out.output_config = { format: { type: "json_schema", schema: rf.json_schema.schema ?? { type: "object" } } };
  }

  applyReasoning(req, out, w, toMessages);

  // Carry chat-only parameters across the pivot.
  const chat: Record<string, unknown> = {};
  for (const k of CARRIED) if (req[k] !== undefined) chat[k] = req[k];
  // Each value is the validated request's own, under a key `CARRIED` checks is a TurnpikeChatParams field.
  if (Object.keys(chat).length > 0) out.turnpike = { chat: chat as TurnpikeChatParams };

  if (toMessages) warnNotCarriedToMessages(req, w);
  const fields: Readonly<Record<string, unknown>> = req;
  for (const [k, message] of Object.entries(NOT_CARRIED)) {
    const v = fields[k];
    if (v !== undefined && v !== null && !(k === "modalities" && isTextOnly(v))) w.add(k, message);
  }
  for (const k of Object.keys(req)) {
    if (!HANDLED.has(k) && !(k in NOT_CARRIED))
      w.add(k, "not a parameter Turnpike translates; it was not sent upstream");
  }
  return { request: out, warnings: w.list };
}

function isTextOnly(v: unknown): boolean {
  return Array.isArray(v) && v.every((m) => m === "text");
}

/**
 * `reasoning_effort` → `thinking` (docs/protocols.md §4.2), then the messages-upstream rules: the
 * budget stays below `max_tokens`; with thinking on only temperature 1 and top_p ≥ 0.95 are
 * accepted; thinking cannot be combined with a tool_choice that forces a tool.
 */
function applyReasoning(req: ChatRequest, out: MessagesRequest, w: Warnings, toMessages: boolean): void {
  const effort = req.reasoning_effort;
  if (effort == null) return;
  if (effort === "none") {
    out.thinking = { type: "disabled" };
    return;
  }
  const budget = EFFORT_TO_BUDGET[effort];
  const forced = out.tool_choice?.type === "any" || out.tool_choice?.type === "tool";
  if (toMessages && forced) {
    // "Thinking may not be enabled when tool_choice forces tool use" (§4.2). The client asked
    // for the tool call explicitly; reasoning is the part that yields.
    w.add("reasoning_effort", "ignored: this upstream cannot think while tool_choice forces a tool call");
    return;
  }
  const thinking: ThinkingConfig = { type: "enabled", budget_tokens: budget };
  out.thinking = thinking;
  if (out.max_tokens <= budget) {
    // The budget counts toward max_tokens and must stay below it; keep the client's cap for
    // the visible answer on top of the budget.
    w.add(
      "max_tokens",
      `raised from ${out.max_tokens} to ${budget + out.max_tokens} to fit the ${budget}-token reasoning budget`,
    );
    out.max_tokens = budget + out.max_tokens;
  }
  if (!toMessages) return;
  if (out.temperature !== undefined && out.temperature !== 1) {
    w.add("temperature", "dropped: with reasoning on, this upstream accepts only the default temperature");
    delete out.temperature;
  }
  if (out.top_p !== undefined && out.top_p < 0.95) {
    w.add("top_p", "dropped: with reasoning on, this upstream accepts only top_p ≥ 0.95");
    delete out.top_p;
  }
}

/** Warnings for chat-only parameters a messages upstream cannot carry. */
function warnNotCarriedToMessages(req: ChatRequest, w: Warnings): void {
  if (req.seed != null) w.add("seed", "not supported by this upstream; replies are not seeded");
  if (req.frequency_penalty != null && req.frequency_penalty !== 0)
    w.add("frequency_penalty", "not supported by this upstream");
  if (req.presence_penalty != null && req.presence_penalty !== 0)
    w.add("presence_penalty", "not supported by this upstream");
  if (req.logit_bias != null && Object.keys(req.logit_bias).length > 0)
    w.add("logit_bias", "not supported by this upstream");
  if (req.logprobs === true) w.add("logprobs", "not supported by this upstream; replies carry no logprobs");
  if (req.top_logprobs != null && req.top_logprobs > 0) w.add("top_logprobs", "not supported by this upstream");
  if (req.response_format?.type === "json_object") {
    w.add(
      "response_format",
      "json_object mode has no counterpart on this upstream; ask for JSON in the prompt or use json_schema",
    );
  }
  if (req.stream_options?.include_obfuscation === true)
    w.add("stream_options.include_obfuscation", "not supported by this upstream");
}
