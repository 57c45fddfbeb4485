/**
 * The messages-format pivot → a chat-completions upstream request (docs/protocols.md §4.1).
 * Chat-only parameters carried in `turnpike.chat` are restored as they were.
 */
import type { ChatMessage, ChatRequest, ChatTool, ChatToolChoice, ClientTool, MessagesRequest } from "@turnpike/schema";
import { usesCacheControl } from "../cache-control.js";
import { isClientTool } from "../json.js";
import { budgetToEffort, outputEffortToChat } from "../thinking.js";
import { systemMessageText } from "../system-messages.js";
import { Warnings, type Warning } from "../warnings.js";
import { convertMessage } from "./convert-messages-to-chat-messages.js";
import { ToolNames } from "./tool-names.js";

export interface MessagesToChatOptions {
  /** The model id the upstream knows. */
  upstreamModel: string;
  /**
   * Which output-cap field to send (default `max_completion_tokens`, which OpenAI's reasoning
   * models require; many compatible vendors read only `max_tokens`).
   */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  /**
   * The upstream model accepts `reasoning_effort` (default true). Non-reasoning models answer
   * it with 400, so for them thinking is not sent (a warning says so).
   */
  supportsReasoning?: boolean;
}

export interface MessagesToChatResult {
  body: ChatRequest;
  warnings: Warning[];
  /** Upstream tool name → client tool name, for names shortened to the 64-character limit. */
  toolNames: Record<string, string>;
}

/** The chat format allows at most 4 stop sequences (docs/protocols.md §2.2). */
const MAX_STOP = 4;

/** Top-level fields this converter reads; any other (non-messages-only) field gets a warning. */
const HANDLED = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "stream",
  "tools",
  "tool_choice",
  "metadata",
  "thinking",
  "output_config",
  "service_tier",
  "turnpike",
]);

/**
 * @example
 * ```ts
 * const { body } = convertMessagesRequestToChat(
 *   { model: "alpha", max_tokens: 256, system: "Be brief.", messages: [{ role: "user", content: "Hi" }], stream: true },
 *   { upstreamModel: "gpt-4.1-nano" },
 * );
 * // body.messages[0] = { role: "system", content: "Be brief." }; body.stream_options = { include_usage: true }
 * ```
 */
export function convertMessagesRequestToChat(req: MessagesRequest, opts: MessagesToChatOptions): MessagesToChatResult {
  const w = new Warnings();
  const carried = req.turnpike?.chat ?? {};
  const names = new ToolNames();

  const messages: ChatMessage[] = [];
  const system = systemText(req.system);
  if (system) messages.push({ role: "system", content: system });
  req.messages.forEach((m, i) => {
    // A mid-conversation system message is a chat `system` message in its place (§2.3).
    if (m.role === "system") {
      if (typeof m.content !== "string" && m.content.some((b) => b.type === "text" && b.cache_control))
        names.hasCacheControl = true;
      const text = systemMessageText(m.content);
      if (text) messages.push({ role: "system", content: text });
      return;
    }
    messages.push(...convertMessage(m.role, m.content, `messages[${i}]`, names, w));
  });

  const body: ChatRequest = { model: opts.upstreamModel, messages };

  // Output cap: the configured field (the pivot's max_tokens is always set).
  const field = opts.maxTokensField ?? "max_completion_tokens";
  body[field] = req.max_tokens;

  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) w.add("top_k", "not supported by chat-completions upstreams");
  if (req.stop_sequences && req.stop_sequences.length > 0) {
    if (req.stop_sequences.length > MAX_STOP) {
      w.add(
        "stop_sequences",
        `only the first ${MAX_STOP} stop sequences were sent (the upstream accepts at most ${MAX_STOP})`,
      );
    }
    body.stop = req.stop_sequences.slice(0, MAX_STOP);
  }
  if (req.stream === true) {
    body.stream = true;
    // Always ask for the usage chunk: without it the upstream reports no usage (§4.1, §4.9 trap 5).
    body.stream_options = { ...(carried.stream_options ?? {}), include_usage: true };
  } else if (req.stream === false) {
    body.stream = false;
  }

  // Tools.
  const clientTools: ClientTool[] = [];
  (req.tools ?? []).forEach((t, i) => {
    if (isClientTool(t)) clientTools.push(t);
    else
      w.add(
        `tools[${i}]`,
        `the server tool "${t.type}" is only available on messages-format upstreams; it was not offered to the model`,
      );
  });
  if (clientTools.length > 0) {
    body.tools = clientTools.map(
      (t): ChatTool => ({
        type: "function",
        function: {
          name: names.toUpstream(t.name),
          ...(t.description !== undefined ? { description: t.description } : {}),
          parameters: t.input_schema,
          ...(t.strict !== undefined ? { strict: t.strict } : {}),
        },
      }),
    );
    const tc = req.tool_choice;
    if (tc) {
      body.tool_choice = toolChoice(tc, names);
      if (tc.type !== "none" && tc.disable_parallel_tool_use === true) body.parallel_tool_calls = false;
    }
  } else if (req.tool_choice && req.tool_choice.type !== "none") {
    w.add("tool_choice", "ignored: the request offers the model no tools it can call here");
  }
  if (carried.parallel_tool_calls !== undefined && body.tools) body.parallel_tool_calls = carried.parallel_tool_calls;

  // Reasoning: a chat client's own reasoning_effort wins; else derive it from `thinking`.
  let effort: ChatRequest["reasoning_effort"];
  if (carried.reasoning_effort !== undefined) effort = carried.reasoning_effort;
  else if (req.thinking?.type === "enabled") effort = budgetToEffort(req.thinking.budget_tokens);
  else if (req.output_config?.effort) effort = outputEffortToChat(req.output_config.effort);
  if (effort != null && opts.supportsReasoning === false) {
    if (effort !== "none")
      w.add(
        carried.reasoning_effort !== undefined ? "reasoning_effort" : "thinking",
        "this model does not reason; not sent",
      );
  } else if (effort !== undefined) {
    body.reasoning_effort = effort;
  }

  // Structured output.
  if (carried.response_format !== undefined) {
    body.response_format = carried.response_format;
  } else if (req.output_config?.format) {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: "response", schema: req.output_config.format.schema },
    };
  }

  // End-user id.
  if (carried.user !== undefined) body.user = carried.user;
  else if (req.metadata?.user_id) body.user = req.metadata.user_id;

  // The rest of the chat-only parameters, as the chat client sent them.
  for (const k of [
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "n",
  ] as const) {
    // The same field of the same type on both sides (TurnpikeChatParams copies ChatRequest's); TS cannot pair the key with its value.
    if (carried[k] !== undefined) (body as Record<string, unknown>)[k] = carried[k];
  }

  if (req.service_tier !== undefined) w.add("service_tier", "not carried to chat-completions upstreams");
  for (const [k, v] of Object.entries(req)) {
    if (HANDLED.has(k)) continue;
    if (v === undefined || v === null) continue;
    w.add(k, "a messages-format-only field; it was not sent to the chat-completions upstream");
  }
  if (names.hasCacheControl || usesCacheControl(req))
    w.add(
      "cache_control",
      "prompt-cache breakpoints are not sent to chat-completions upstreams (they cache automatically)",
    );
  return { body, warnings: w.list, toolNames: names.map };
}

function systemText(system: MessagesRequest["system"]): string | undefined {
  if (system === undefined) return undefined;
  if (typeof system === "string") return system.length > 0 ? system : undefined;
  const text = system.map((b) => b.text).join("\n\n");
  return text.length > 0 ? text : undefined;
}

function toolChoice(tc: NonNullable<MessagesRequest["tool_choice"]>, names: ToolNames): ChatToolChoice {
  switch (tc.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      return { type: "function", function: { name: names.toUpstream(tc.name) } };
    default: {
      const never: never = tc;
      return never;
    }
  }
}
