/** Chat-completions reply → messages-format reply (docs/protocols.md §4.3, §4.4). */
import type { ContentBlock, MessagesResponse, StopReason } from "@turnpike/schema";
import { randomId, sanitizeToolId } from "../ids.js";
import { isRecord, parseToolArguments } from "../json.js";
import { findStopSequence } from "../stop-sequence.js";
import { chatUsageToMessages } from "../usage.js";
import { mapChatFinishReason } from "./map-chat-finish-reason.js";
import { restoreToolName } from "./tool-names.js";

export interface ChatReplyContext {
  /** The model id the client asked for (shown in the reply). */
  model: string;
  /** The request's stop sequences, to recognise which one ended the reply (see stop-sequence.ts). */
  stopSequences?: readonly string[] | undefined;
  /** Upstream tool name → client tool name (from the request converter). */
  toolNames?: Record<string, string> | undefined;
}

/**
 * @example
 * ```ts
 * const res = convertChatResponseToMessages(chatReply, { model: "beta-4o" });
 * // res.stop_reason === "tool_use" when the reply holds tool calls
 * ```
 */
export function convertChatResponseToMessages(res: unknown, ctx: ChatReplyContext): MessagesResponse {
  const r = isRecord(res) ? res : {};
  const choices = Array.isArray(r.choices) ? r.choices.filter(isRecord) : [];
  const choice = choices.find((c) => c.index === 0) ?? choices[0] ?? {};
  const msg = isRecord(choice.message) ? choice.message : {};
  const content: ContentBlock[] = [];

  const reasoning =
    typeof msg.reasoning_content === "string"
      ? msg.reasoning_content
      : typeof msg.reasoning === "string"
        ? msg.reasoning
        : "";
  // A chat upstream's reasoning has no signature; an empty one marks it as such (§4.2).
  if (reasoning) content.push({ type: "thinking", thinking: reasoning, signature: "" });

  let text = textOf(msg.content);
  const finish = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
  let stopReason: StopReason = mapChatFinishReason(finish);
  let stopSequence: string | null = null;
  if (stopReason === "end_turn") {
    const match = findStopSequence(text, ctx.stopSequences, choice.stop_reason ?? choice.matched_stop);
    if (match) {
      stopReason = "stop_sequence";
      stopSequence = match.sequence;
      text = match.text;
    }
  }
  if (text) content.push({ type: "text", text });
  if (!text && typeof msg.refusal === "string" && msg.refusal) {
    content.push({ type: "text", text: msg.refusal });
    stopReason = "refusal";
  }

  const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls.filter(isRecord) : [];
  for (const call of calls) {
    const fn = isRecord(call.function) ? call.function : {};
    content.push({
      type: "tool_use",
      id: sanitizeToolId(typeof call.id === "string" ? call.id : undefined),
      name: restoreToolName(typeof fn.name === "string" ? fn.name : "", ctx.toolNames),
      input: parseToolArguments(typeof fn.arguments === "string" ? fn.arguments : undefined),
    });
  }
  if (isRecord(msg.function_call)) {
    const fn = msg.function_call;
    content.push({
      type: "tool_use",
      id: randomId("toolu_"),
      name: restoreToolName(typeof fn.name === "string" ? fn.name : "", ctx.toolNames),
      input: parseToolArguments(typeof fn.arguments === "string" ? fn.arguments : undefined),
    });
  }
  // Decide "tool use" from the content, not from the upstream's word (§4.3).
  if (content.some((b) => b.type === "tool_use")) stopReason = "tool_use";

  return {
    id: typeof r.id === "string" && r.id ? `msg_${sanitizeToolId(r.id)}` : randomId("msg_"),
    type: "message",
    role: "assistant",
    model: ctx.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: chatUsageToMessages(r.usage),
  };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : "")).join("");
  }
  return "";
}
