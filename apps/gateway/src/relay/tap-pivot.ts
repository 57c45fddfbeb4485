import type { MessagesStreamEvent } from "@turnpike/schema";
import { messagesUsageFields } from "@turnpike/providers";
import type { UsageSink } from "../vocabulary/usage-sink";

/**
 * Reads one pivot event of a translated stream: the usage the upstream machine put in
 * `message_start` (input) and `message_delta` (the closing numbers), and the relayed text.
 */
export function readPivotEvent(sink: UsageSink, ev: MessagesStreamEvent): void {
  switch (ev.type) {
    case "message_start": {
      const usage = messagesUsageFields(ev.message.usage);
      // The start event's output count is a placeholder; only its input side is real.
      delete usage.output_tokens;
      sink.report(usage, false);
      break;
    }
    case "content_block_delta": {
      const d = ev.delta;
      const text =
        "text" in d ? d.text : "partial_json" in d ? d.partial_json : "thinking" in d ? d.thinking : undefined;
      if (typeof text === "string") sink.relayed(text);
      break;
    }
    case "message_delta":
      if (ev.delta.stop_reason) sink.finished?.(ev.delta.stop_reason);
      if (ev.usage) {
        const usage = messagesUsageFields(ev.usage);
        // A translated stream whose upstream never reported usage ends with a zero count; the
        // messages format never reports 0 output tokens for a real reply.
        sink.report(usage, (usage.output_tokens ?? 0) > 0);
      }
      break;
    default:
      break;
  }
}
