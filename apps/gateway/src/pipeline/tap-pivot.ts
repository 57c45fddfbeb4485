import type { MessagesStreamEvent } from "@turnpike/schema";
import type { Meter } from "../usage/meter";
import { messagesUsageToTokens } from "../usage/usage-map";

/**
 * Reads usage and relayed text off the pivot event stream of a translated call, passing every
 * event through unchanged.
 */
export function tapPivotEvents(meter: Meter, _model: string): TransformStream<MessagesStreamEvent, MessagesStreamEvent> {
  return new TransformStream<MessagesStreamEvent, MessagesStreamEvent>({
    transform(ev, controller) {
      switch (ev.type) {
        case "message_start": {
          const usage = messagesUsageToTokens(ev.message.usage);
          delete usage.output_tokens;
          meter.report(usage);
          break;
        }
        case "content_block_delta": {
          const d = ev.delta as Record<string, unknown>;
          const text = d.text ?? d.partial_json ?? d.thinking;
          if (typeof text === "string") meter.relayed.push(text);
          break;
        }
        case "message_delta":
          if (ev.usage) {
            const usage = messagesUsageToTokens(ev.usage);
            meter.report(usage);
            // A translated stream whose upstream never reported usage ends with a zero count;
            // the messages format never reports 0 output tokens for a real reply.
            if ((usage.output_tokens ?? 0) > 0) meter.reported = true;
          }
          break;
        default:
          break;
      }
      controller.enqueue(ev);
    },
  });
}
