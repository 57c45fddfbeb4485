/**
 * generateContent stream (`alt=sse`, decoded) → messages-format events (docs/protocols.md §4.7).
 * Each event holds only new parts: `thought` text → thinking, text → text (`""` skipped),
 * `functionCall` → a whole tool_use block (start, one `input_json_delta` with the complete JSON,
 * stop — never an empty block, §4.9 trap 1). Function calls carry no ids on the Gemini API, so
 * each gets a generated `toolu_…` id, under which its `thoughtSignature` is stored (§3.7).
 * `usageMetadata` is cumulative; the last one counts. The `finishReason` chunk closes the message
 * (`message_delta`); Gemini sends no terminator, so `message_stop` follows at EOF. EOF without a
 * `finishReason` (or a prompt block) is an interrupted stream: in-band `api_error`.
 */
import type { MessagesStreamEvent } from "@turnpike/schema";
import { MachineStream } from "../stream-transformer.js";
import type { SSEMessage } from "@turnpike/schema/sse";
import { restoreToolName } from "../chat/tool-names.js";
import { GatewayError } from "../errors.js";
import { upstreamErrorToGatewayError } from "../upstream-errors.js";
import { randomId } from "../ids.js";
import { isRecord, tryParseJson } from "../json.js";
import { MessagesEventBuilder, type MessagesStreamContext } from "../messages/messages-event-builder.js";
import type { SignatureStore } from "../signature-store.js";
import { generateUsageToTotals, type UsageTotals } from "../usage.js";
import { mapGenerateFinishReason } from "./map-generate-finish-reason.js";

export interface GenerateStreamContext extends MessagesStreamContext {
  /** Where thought signatures of generated tool calls are kept for the next turn. */
  signatures?: SignatureStore | undefined;
  /** Upstream function name → client tool name (from the request converter). */
  toolNames?: Record<string, string> | undefined;
  /** Accepted for symmetry; generateContent never says which stop sequence matched. */
  stopSequences?: readonly string[] | undefined;
}

export class GenerateToMessagesEventStream extends MachineStream<
  SSEMessage,
  MessagesStreamEvent,
  GenerateToMessagesMachine
> {
  constructor(ctx: GenerateStreamContext) {
    super((emit) => new GenerateToMessagesMachine(ctx, emit));
  }
}

/**
 * @example
 * ```ts
 * const events = upstream.body!
 *   .pipeThrough(new SSEDecoderStream())
 *   .pipeThrough(generateStreamToMessagesEvents({ model: "gamma-3-pro", signatures }));
 * ```
 */
export function generateStreamToMessagesEvents(ctx: GenerateStreamContext): GenerateToMessagesEventStream {
  return new GenerateToMessagesEventStream(ctx);
}

export class GenerateToMessagesMachine {
  private readonly b: MessagesEventBuilder;
  private finished = false;

  constructor(
    private readonly ctx: GenerateStreamContext,
    emit: (ev: MessagesStreamEvent) => void,
  ) {
    this.b = new MessagesEventBuilder(emit, ctx);
  }

  usage(): UsageTotals {
    return this.b.usage();
  }

  push(msg: SSEMessage): void {
    if (this.b.isEnded) return;
    const parsed = tryParseJson(msg.data);
    // Without alt=sse a server may send a JSON array of responses; take each in turn.
    const items = Array.isArray(parsed) ? parsed : [parsed];
    for (const item of items) this.item(item, msg.data);
  }

  private item(res: unknown, raw: string): void {
    if (this.b.isEnded) return;
    if (!isRecord(res)) {
      this.b.error(
        new GatewayError({
          status: 502,
          type: "api_error",
          message: `The upstream sent a stream event that is not JSON: ${raw.slice(0, 120)}`,
        }),
      );
      return;
    }
    if (isRecord(res.error)) {
      const code = typeof res.error.code === "number" ? res.error.code : 500;
      this.b.error(upstreamErrorToGatewayError("generate", code, JSON.stringify(res), undefined));
      return;
    }
    this.b.start(res.responseId);
    if (isRecord(res.usageMetadata)) this.b.setUsage(generateUsageToTotals(res.usageMetadata));
    if (this.finished) return;

    const candidates = Array.isArray(res.candidates) ? res.candidates.filter(isRecord) : [];
    const candidate = candidates.find((c) => (c.index ?? 0) === 0) ?? candidates[0];
    if (!candidate) {
      const feedback = isRecord(res.promptFeedback) ? res.promptFeedback : undefined;
      if (feedback && typeof feedback.blockReason === "string") {
        // The prompt itself was blocked: no candidates, a refusal (§4.3).
        this.finished = true;
        this.b.finish("refusal", null);
      }
      return;
    }
    const content = isRecord(candidate.content) ? candidate.content : {};
    const parts = Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];
    for (const part of parts) {
      const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
      if (isRecord(part.functionCall)) {
        const fc = part.functionCall;
        const id = randomId("toolu_");
        const name = restoreToolName(typeof fc.name === "string" ? fc.name : "", this.ctx.toolNames);
        this.b.openTool(id, name);
        this.b.toolArguments(JSON.stringify(isRecord(fc.args) ? fc.args : {}));
        this.b.closeOpen();
        if (signature) this.ctx.signatures?.set(id, signature);
        continue;
      }
      if (typeof part.text !== "string") continue;
      if (part.thought === true) {
        this.b.thinking(part.text);
        if (signature) this.b.thinkingSignature(signature);
      } else {
        this.b.text(part.text);
      }
    }

    if (typeof candidate.finishReason === "string") {
      this.finished = true;
      this.b.finish(mapGenerateFinishReason(candidate.finishReason), null);
    }
  }

  end(): void {
    if (this.b.isEnded) return;
    if (!this.finished) {
      this.b.error(
        new GatewayError({
          status: 502,
          type: "api_error",
          message: "The upstream stream ended before the reply was complete (no finishReason)",
        }),
      );
      return;
    }
    this.b.stop();
  }

  cancel(): void {
    this.b.reportUsage();
  }
}
