/**
 * Mid-conversation system messages (`role: "system"` inside `messages`, the messages format's
 * `mid-conversation-system-2026-04-07` beta; docs/protocols.md §1.2). A messages upstream takes
 * them as they are, a chat upstream as its own `system` messages in place (§2.3), and an upstream
 * that has no such thing gets them folded into the conversation, in order, marked as system text.
 */
import type { ContentBlockParam } from "@turnpike/schema";

/** The text of a system message (its text blocks joined as the top-level system prompt's are). */
export function systemMessageText(content: string | readonly ContentBlockParam[]): string {
  if (typeof content === "string") return content;
  return content
    .map((b) => (b.type === "text" ? b.text : ""))
    .filter((t) => t.length > 0)
    .join("\n\n");
}

/**
 * A system message folded into a user turn: marked, so that the model reads it as instructions
 * from the system and not as words of the user.
 *
 * @example
 * ```ts
 * foldSystemMessage("Available skills: review"); // "<system-message>\nAvailable skills: review\n</system-message>"
 * ```
 */
export function foldSystemMessage(text: string): string {
  return `<system-message>\n${text}\n</system-message>`;
}
