/** Messages-format reply → chat-completions reply (docs/protocols.md §4.3, §4.4, §4.6 last line). */
import type { ChatResponse, ChatToolCall, MessagesResponse } from "@turnpike/schema";
import { messagesUsageToChat } from "../usage.js";
import { mapStopReasonToChat } from "./map-stop-reason-to-chat.js";

export interface MessagesReplyToChatContext {
  /** The model id the client asked for. */
  model: string;
  /** Reply id; default `chatcmpl-` + the messages id. */
  id?: string;
  /** Unix seconds; default now. */
  created?: number;
}

/**
 * Text blocks are joined into `content` — null when there is none (a tool-only reply, a refusal),
 * as a chat upstream answers and as the chat stream of the same reply accumulates;
 * tool_use blocks become `tool_calls`; thinking becomes the `reasoning_content` extension that
 * DeepSeek-style clients read (the official client ignores unknown fields).
 *
 * @example
 * ```ts
 * const chat = convertMessagesResponseToChat(messagesReply, { model: "alpha-haiku-4-5" });
 * chat.choices[0].finish_reason; // "tool_calls" for stop_reason "tool_use"
 * ```
 */
export function convertMessagesResponseToChat(res: MessagesResponse, ctx: MessagesReplyToChatContext): ChatResponse {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const calls: ChatToolCall[] = [];
  for (const b of res.content) {
    if (b.type === "text") texts.push(b.text);
    else if (b.type === "thinking") reasoning.push(b.thinking);
    else if (b.type === "tool_use") {
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    }
  }
  const finish = calls.length > 0 ? "tool_calls" : mapStopReasonToChat(res.stop_reason);
  const message: ChatResponse["choices"][number]["message"] = {
    role: "assistant",
    content: texts.length > 0 ? texts.join("") : null,
    refusal: null,
  };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join("");
  return {
    id: ctx.id ?? `chatcmpl-${res.id.replace(/^msg_/, "")}`,
    object: "chat.completion",
    created: ctx.created ?? Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: messagesUsageToChat(res.usage),
  };
}
