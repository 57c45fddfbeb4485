import type { MessagesRequest } from "@turnpike/schema";
import type { ContinueBy } from "../protocols/upstream-protocol";

/*
 * How a continuation hands an upstream the reply it must go on with (each protocol's
 * `continueBy`, protocols/upstream-protocol.ts):
 * - `prefill`: the partial reply as the conversation's last, assistant turn; the vendor writes
 *   its next tokens after it (the messages protocol's own prefill). Its text may not end in
 *   whitespace, and it does not go with extended thinking (the vendor refuses both).
 * - `ask`: the partial reply as an assistant turn, then a user turn asking to go on exactly
 *   where it stopped (no chat-completions, Responses or generateContent vendor has a prefill
 *   every account can use; a repeated start is taken off by the relay, continuing-tap.ts).
 * Some messages vendors refuse a prefill on their newest models (a 400): the continuation then
 * asks instead (dispatch/continuation.ts).
 */

/** The user turn of an `ask` (the simulator recognises its first sentence). */
export const CONTINUE_ASK =
  "Your previous reply was cut off. Continue it exactly where it stopped, from the next character: do not repeat any of it, do not start over and add nothing before it.";

/**
 * The client's request (in the pivot) with the reply received so far as the assistant's
 * partial turn, asked for `by`. No partial text: the request as it was (a stream cut before its
 * first word starts over). Thinking is not asked for: a prefill refuses it, and the continuation
 * goes on with text that came after the thinking.
 */
export function continuationRequest(pivot: MessagesRequest, partial: string, by: ContinueBy): MessagesRequest {
  const { thinking: _off, ...rest } = pivot as MessagesRequest & { thinking?: unknown };
  const out: MessagesRequest = { ...rest, messages: [...pivot.messages] };
  const said = by === "prefill" ? partial.trimEnd() : partial;
  if (said === "") return out;
  const last = out.messages.at(-1);
  if (by === "prefill" && last?.role === "assistant") {
    // The client's own prefill, which the vendor never repeats: the partial goes on after it.
    const content = typeof last.content === "string" ? [{ type: "text" as const, text: last.content }] : last.content;
    out.messages[out.messages.length - 1] = { role: "assistant", content: [...content, { type: "text", text: said }] };
    return out;
  }
  out.messages.push({ role: "assistant", content: [{ type: "text", text: said }] });
  if (by === "ask") out.messages.push({ role: "user", content: [{ type: "text", text: CONTINUE_ASK }] });
  return out;
}
