import type { StopReason } from "@turnpike/schema";

/**
 * Chat `finish_reason` → messages `stop_reason` (docs/protocols.md §4.3). Unknown vendor reasons
 * (DeepSeek `insufficient_system_resource`, …) become `end_turn`. The caller forces `tool_use`
 * when the content holds a tool call, whatever the upstream said (§4.3).
 *
 * @example
 * ```ts
 * mapChatFinishReason("length"); // "max_tokens"
 * ```
 */
export function mapChatFinishReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}
