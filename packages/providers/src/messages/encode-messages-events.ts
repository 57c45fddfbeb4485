/**
 * Messages-format events → SSE frames with both the `event:` line (the official client
 * dispatches on it, docs/protocols.md §1.7 / §4.9 trap 7) and the JSON `type`.
 */
import type { MessagesStreamEvent } from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";

export function formatMessagesEvent(ev: MessagesStreamEvent): string {
  return formatSSE({ event: ev.type, data: JSON.stringify(ev) });
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
