/** generateContent reply → messages-format reply (docs/protocols.md §3.3–3.5, §4.3, §4.4). */
import type { ContentBlock, MessagesResponse, StopReason } from "@turnpike/schema";
import { restoreToolName } from "../chat/tool-names.js";
import { randomId } from "../ids.js";
import { isRecord } from "../json.js";
import type { SignatureStore } from "../signature-store.js";
import { findStopSequence } from "../stop-sequence.js";
import { generateUsageToMessages } from "../usage.js";
import { mapGenerateFinishReason } from "./map-generate-finish-reason.js";

export interface GenerateReplyContext {
  /** The model id the client asked for. */
  model: string;
  /** The request's stop sequences (see stop-sequence.ts). */
  stopSequences?: readonly string[] | undefined;
  /** Where thought signatures of the generated tool calls are stored (§3.7). */
  signatures?: SignatureStore | undefined;
  /** Upstream function name → client tool name (from the request converter). */
  toolNames?: Record<string, string> | undefined;
}

/**
 * Thought parts become thinking blocks (their Gemini signature, if any, as `signature`);
 * adjacent text parts are joined into one text block; each `functionCall` becomes a tool_use
 * with a generated id (Gemini sends none). `stop_reason` is `tool_use` whenever a call is
 * present, since Gemini ends such turns with `STOP` (§3.4).
 *
 * @example
 * ```ts
 * const res = convertGenerateResponseToMessages(geminiReply, { model: "gamma-3-pro", signatures });
 * ```
 */
export function convertGenerateResponseToMessages(res: unknown, ctx: GenerateReplyContext): MessagesResponse {
  const r = isRecord(res) ? res : {};
  const candidates = Array.isArray(r.candidates) ? r.candidates.filter(isRecord) : [];
  const candidate = candidates.find((c) => (c.index ?? 0) === 0) ?? candidates[0];
  const content: ContentBlock[] = [];
  let stopReason: StopReason = "end_turn";
  let stopSequence: string | null = null;

  if (!candidate) {
    // The prompt was blocked: no candidates, `promptFeedback.blockReason` (§3.3, §4.3).
    if (isRecord(r.promptFeedback) && typeof r.promptFeedback.blockReason === "string") stopReason = "refusal";
  } else {
    const parts =
      isRecord(candidate.content) && Array.isArray(candidate.content.parts)
        ? candidate.content.parts.filter(isRecord)
        : [];
    for (const part of parts) {
      const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
      if (isRecord(part.functionCall)) {
        const fc = part.functionCall;
        const id = randomId("toolu_");
        if (signature) ctx.signatures?.set(id, signature);
        content.push({
          type: "tool_use",
          id,
          name: restoreToolName(typeof fc.name === "string" ? fc.name : "", ctx.toolNames),
          input: isRecord(fc.args) ? fc.args : {},
        });
        continue;
      }
      if (typeof part.text !== "string" || part.text === "") continue;
      const last = content[content.length - 1];
      if (part.thought === true) {
        if (last?.type === "thinking") last.thinking += part.text;
        else content.push({ type: "thinking", thinking: part.text, signature: signature ?? "" });
      } else if (last?.type === "text") {
        last.text += part.text;
      } else {
        content.push({ type: "text", text: part.text });
      }
    }
    stopReason = mapGenerateFinishReason(
      typeof candidate.finishReason === "string" ? candidate.finishReason : undefined,
    );
    if (stopReason === "end_turn") {
      const lastText = content[content.length - 1];
      if (lastText?.type === "text") {
        const match = findStopSequence(lastText.text, ctx.stopSequences);
        if (match) {
          stopReason = "stop_sequence";
          stopSequence = match.sequence;
          lastText.text = match.text;
          if (lastText.text === "") content.pop();
        }
      }
    }
    if (content.some((b) => b.type === "tool_use") && stopReason !== "max_tokens") stopReason = "tool_use";
  }

  return {
    id:
      typeof r.responseId === "string" && /^[A-Za-z0-9_-]+$/.test(r.responseId)
        ? `msg_${r.responseId}`
        : randomId("msg_"),
    type: "message",
    role: "assistant",
    model: ctx.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: generateUsageToMessages(r.usageMetadata),
  };
}
