import type { FinishReason, StopReason } from "@turnpike/schema";

/**
 * Messages `stop_reason` → chat `finish_reason` (docs/protocols.md §4.3).
 *
 * @example
 * ```ts
 * mapStopReasonToChat("tool_use"); // "tool_calls"
 * ```
 */
export function mapStopReasonToChat(reason: StopReason | null | undefined): FinishReason {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
    case null:
    case undefined:
      return "stop";
    default: {
      const never: never = reason;
      return never;
    }
  }
}
