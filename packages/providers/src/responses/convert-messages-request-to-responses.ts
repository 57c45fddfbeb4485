/**
 * The messages-format pivot → a Responses upstream request (docs/protocols.md §5.4). The pivot
 * goes through the chat converter first (tool names, images, files, thinking → effort,
 * structured output and every warning are decided there once), then the chat request is re-told
 * as Responses input items: messages stay messages, tool calls become `function_call` items,
 * tool results `function_call_output` items.
 */
import type { ChatContentPart, ChatMessage, ChatRequest, MessagesRequest } from "@turnpike/schema";
import { convertMessagesRequestToChat } from "../chat/convert-messages-request-to-chat.js";
import type { Warning } from "../warnings.js";

export interface MessagesToResponsesRequestResult {
  body: Record<string, unknown>;
  warnings: Warning[];
  /** Upstream tool name → client tool name, for names shortened to the 64-character limit. */
  toolNames: Record<string, string>;
}

/** Chat-only parameters the Responses API has no field for. */
const NOT_IN_RESPONSES = [
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "n",
] as const;

function partToResponses(p: ChatContentPart): Record<string, unknown> {
  switch (p.type) {
    case "text":
      return { type: "input_text", text: p.text };
    case "image_url":
      return { type: "input_image", image_url: p.image_url.url, detail: p.image_url.detail ?? "auto" };
    case "file":
      return { type: "input_file", ...p.file };
    case "input_audio":
      // The chat converter never writes audio from the pivot; kept total for the compiler.
      return { type: "input_text", text: "" };
    default: {
      const never: never = p;
      return never;
    }
  }
}

function textOf(content: string | readonly { type: string; text?: string }[] | null | undefined): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join("");
}

function messagesToItems(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "system":
      case "developer":
        items.push({ role: m.role, content: textOf(m.content) });
        break;
      case "user":
        items.push({
          role: "user",
          content: typeof m.content === "string" ? m.content : m.content.map(partToResponses),
        });
        break;
      case "assistant": {
        const text = textOf(m.content);
        if (text) items.push({ role: "assistant", content: text });
        for (const c of m.tool_calls ?? []) {
          if (c.type === "function")
            items.push({
              type: "function_call",
              call_id: c.id,
              name: c.function.name,
              arguments: c.function.arguments,
            });
        }
        break;
      }
      case "tool":
        items.push({ type: "function_call_output", call_id: m.tool_call_id, output: textOf(m.content) });
        break;
      case "function":
        // Legacy function messages are a chat client's own; the pivot never produces them.
        break;
      default: {
        const never: never = m;
        return never;
      }
    }
  }
  return items;
}

/** A chat request (as converted from the pivot) as the Responses request that asks the same. */
function chatToResponses(chat: ChatRequest, warn: (param: string, message: string) => void): Record<string, unknown> {
  const [first, ...rest] = chat.messages;
  const leadingSystem = first?.role === "system" ? textOf(first.content) : undefined;
  const body: Record<string, unknown> = {
    model: chat.model,
    ...(leadingSystem !== undefined ? { instructions: leadingSystem } : {}),
    input: messagesToItems(leadingSystem !== undefined ? rest : chat.messages),
    // The conversation is Turnpike's (or the client's) to keep: the vendor is asked not to store it.
    store: false,
  };
  const cap = chat.max_completion_tokens ?? chat.max_tokens;
  if (cap != null) body.max_output_tokens = cap;
  if (chat.temperature != null) body.temperature = chat.temperature;
  if (chat.top_p != null) body.top_p = chat.top_p;
  if (chat.stop != null) warn("stop_sequences", "the Responses API has no stop sequences; not sent");
  if (chat.stream) body.stream = true;
  if (chat.tools?.length) {
    body.tools = chat.tools.flatMap((t) =>
      t.type === "function"
        ? [
            {
              type: "function",
              name: t.function.name,
              ...(t.function.description !== undefined ? { description: t.function.description } : {}),
              parameters: t.function.parameters ?? { type: "object", properties: {} },
              strict: t.function.strict ?? false,
            },
          ]
        : [],
    );
  }
  const tc = chat.tool_choice;
  if (typeof tc === "string") body.tool_choice = tc;
  else if (tc && tc.type === "function") body.tool_choice = { type: "function", name: tc.function.name };
  if (chat.parallel_tool_calls != null) body.parallel_tool_calls = chat.parallel_tool_calls;
  // The vendor never shows its reasoning itself; a summary of it is what a client that asked for
  // thinking can be given (it becomes the reply's thinking block).
  if (chat.reasoning_effort != null)
    body.reasoning =
      chat.reasoning_effort === "none" ? { effort: "none" } : { effort: chat.reasoning_effort, summary: "auto" };
  const rf = chat.response_format;
  if (rf?.type === "json_object") body.text = { format: { type: "json_object" } };
  if (rf?.type === "json_schema") body.text = { format: { type: "json_schema", ...rf.json_schema } };
  if (chat.user != null) body.safety_identifier = chat.user;
  if (chat.metadata != null) body.metadata = chat.metadata;
  if (chat.prompt_cache_key != null) body.prompt_cache_key = chat.prompt_cache_key;
  for (const k of NOT_IN_RESPONSES) if (chat[k] != null) warn(k, "the Responses API has no such parameter; not sent");
  return body;
}

/**
 * @example
 * ```ts
 * const { body } = convertMessagesRequestToResponses(
 *   { model: "alpha", max_tokens: 256, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] },
 *   { upstreamModel: "gpt-5" },
 * );
 * // body = { model: "gpt-5", instructions: "Be brief.", input: [{ role: "user", content: "Hi" }], store: false, max_output_tokens: 256 }
 * ```
 */
export function convertMessagesRequestToResponses(
  req: MessagesRequest,
  opts: { upstreamModel: string },
): MessagesToResponsesRequestResult {
  const chat = convertMessagesRequestToChat(req, { upstreamModel: opts.upstreamModel });
  // The chat converter's warnings name its upstream; here the upstream speaks Responses. Its stop
  // sequences warning (a cut to four) gives way to this protocol's own (none are sent).
  const warnings: Warning[] = chat.warnings
    .filter((w) => w.param !== "stop_sequences")
    .map((w) => ({ ...w, message: w.message.replaceAll("chat-completions upstream", "Responses upstream") }));
  const body = chatToResponses(chat.body, (param, message) => warnings.push({ param, message }));
  return { body, warnings, toolNames: chat.toolNames };
}
