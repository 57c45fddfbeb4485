/**
 * Messages-format events → SSE frames with both the `event:` line (the official client
 * dispatches on it, docs/protocols.md §1.7 / §4.9 trap 7) and the JSON `type`.
 */
import type { MessagesStreamEvent } from "@turnpike/schema";

export function formatMessagesEvent(ev: MessagesStreamEvent): string {
  // JSON text never holds a raw line break: one `data:` line, written directly (it runs per event).
  return `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
}

/**
 * @example
 * ```ts
 * events.pipeThrough(encodeMessagesEvents()); // "event: message_start\ndata: {…}\n\n", …
 * ```
 */
export function encodeMessagesEvents(): TransformStream<MessagesStreamEvent, string> {
  return new TransformStream<MessagesStreamEvent, string>({
    transform(ev, controller) {
      controller.enqueue(formatMessagesEvent(ev));
    },
  });
}
