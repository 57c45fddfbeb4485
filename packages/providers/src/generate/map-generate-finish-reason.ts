import type { StopReason } from "@turnpike/schema";

/** Safety-type finish reasons: the vendor stopped the output (docs/protocols.md §3.4). */
const BLOCKED = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
  "IMAGE_OTHER",
]);

/**
 * generateContent `finishReason` → messages `stop_reason` (docs/protocols.md §4.3). There is no
 * tool-call finish reason (a call ends with `STOP`), so the caller forces `tool_use` when a
 * `functionCall` part was seen. Malformed/unexpected tool calls end the turn (`end_turn`): the
 * reply is still well-formed, and the client sees no tool call.
 *
 * @example
 * ```ts
 * mapGenerateFinishReason("MAX_TOKENS"); // "max_tokens"
 * ```
 */
export function mapGenerateFinishReason(reason: string | null | undefined): StopReason {
  if (reason === "MAX_TOKENS") return "max_tokens";
  if (reason && BLOCKED.has(reason)) return "refusal";
  return "end_turn";
}
