/**
 * A Responses upstream's reply in chat-completions terms. Its output items map one to one onto a
 * chat reply's message (output text → content, a refusal → refusal, reasoning summaries →
 * reasoning text, function calls → tool calls) and its status onto a finish reason, so the chat
 * reader turns it into the pivot reply under exactly the chat rules (tool names, stop
 * sequences, refusals).
 */
import { isRecord } from "../json.js";
import { responsesUsageToChat } from "./responses-usage.js";

/** The finish reason a chat reply would give for a Responses status (and the calls it holds). */
export function finishReasonOf(response: Record<string, unknown>, hasCalls: boolean): string {
  const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
  if (response.status === "incomplete") return reason === "content_filter" ? "content_filter" : "length";
  return hasCalls ? "tool_calls" : "stop";
}

/** The text of an item's parts of one type (`output_text`, `refusal`, `summary_text`, `reasoning_text`). */
function partsText(parts: unknown, type: string, field = "text"): string {
  if (!Array.isArray(parts)) return "";
  let text = "";
  for (const p of parts) if (isRecord(p) && p.type === type && typeof p[field] === "string") text += p[field];
  return text;
}

/**
 * @example
 * ```ts
 * convertResponsesResponseToChat({ status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "Hi" }] }] })
 * // → { choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }], … }
 * ```
 */
export function convertResponsesResponseToChat(json: unknown): Record<string, unknown> {
  const r = isRecord(json) ? json : {};
  let content = "";
  let refusal = "";
  let reasoning = "";
  const calls: Record<string, unknown>[] = [];
  for (const item of Array.isArray(r.output) ? r.output : []) {
    if (!isRecord(item)) continue;
    if (item.type === "message") {
      content += partsText(item.content, "output_text");
      refusal += partsText(item.content, "refusal", "refusal");
    } else if (item.type === "reasoning") {
      // A summary where the vendor gave one, else the reasoning text some vendors send.
      reasoning += partsText(item.summary, "summary_text") || partsText(item.content, "reasoning_text");
    } else if (item.type === "function_call") {
      calls.push({
        id: item.call_id,
        type: "function",
        function: { name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "{}" },
      });
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content: content || null };
  if (refusal) message.refusal = refusal;
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length) message.tool_calls = calls;
  return {
    id: r.id,
    object: "chat.completion",
    model: r.model,
    choices: [{ index: 0, message, finish_reason: finishReasonOf(r, calls.length > 0) }],
    ...(isRecord(r.usage) ? { usage: responsesUsageToChat(r.usage) } : {}),
  };
}
