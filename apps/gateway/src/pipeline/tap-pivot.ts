import type { MessagesStreamEvent } from "@turnpike/schema";
import type { Meter } from "../usage/meter";
import { messagesUsageToTokens } from "../usage/usage-map";

/** Reads usage and relayed text off one pivot event of a translated call. */
export function readPivotEvent(meter: Meter, ev: MessagesStreamEvent): void {
  switch (ev.type) {
    case "message_start": {
      const usage = messagesUsageToTokens(ev.message.usage);
      // The start event's output count is a placeholder; only its input side is real.
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
}
