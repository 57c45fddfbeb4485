/**
 * Pivot stream events → generateContent stream chunks for a client of that format (docs/protocols.md
 * §6.4). Each text or thought delta is a chunk of one part; a function call is one chunk once its
 * arguments are whole (the format streams calls whole). The last chunk is held back until the
 * stream ends, so that it carries the `finishReason` and the cumulative `usageMetadata` as the
 * vendor's last chunk does (clients read the end of the reply from a chunk with content); the
 * chunks before it carry no usage, since an upstream may tell the prompt's count only at the end.
 */
import type { GenerateReplyPart, GenerateResponse, MessagesStreamEvent } from "@turnpike/schema";
import { GatewayError, gatewayErrorFromMessagesError } from "../errors.js";
import { randomId } from "../ids.js";
import { tryParseJson, isRecord } from "../json.js";
import { MessagesUsageAccumulator } from "../messages/messages-sse-to-events.js";
import { generateFinishReason, generateUsage } from "./convert-messages-response-to-generate.js";
import { renderGenerateError } from "./render-generate-error.js";
import { encodeThoughtToken, type ThoughtBlock } from "./thought-token.js";

export interface GenerateChunksContext {
  /** The catalog id (each chunk's `modelVersion`). */
  model: string;
  /** Writes one chunk's JSON in the stream's framing (an SSE frame, or an element of a JSON array). */
  frame: (json: string) => void;
}

interface OpenTool {
  id: string;
  name: string;
  json: string;
}

export class MessagesToGenerateMachine {
  private readonly usage = new MessagesUsageAccumulator();
  private responseId = randomId("gen_");
  private held: GenerateReplyPart[] | undefined;
  private readonly tools = new Map<number, OpenTool>();
  /** Thinking blocks open by index (text and signature so far), and the signed ones done. */
  private readonly thinking = new Map<number, { thinking: string; signature: string }>();
  private readonly thoughts: ThoughtBlock[] = [];
  private calls = 0;
  private stop: Parameters<typeof generateFinishReason>[0];
  private ended = false;

  constructor(private readonly ctx: GenerateChunksContext) {}

  push(ev: MessagesStreamEvent): void {
    if (this.ended) return;
    switch (ev.type) {
      case "message_start":
        this.usage.push(ev);
        if (ev.message.id) this.responseId = ev.message.id;
        return;
      case "content_block_start": {
        const b = ev.content_block;
        if (b.type === "tool_use")
          this.tools.set(ev.index, {
            id: b.id,
            name: b.name,
            json: b.input && Object.keys(b.input).length ? JSON.stringify(b.input) : "",
          });
        else if (b.type === "text" && b.text) this.part({ text: b.text });
        else if (b.type === "thinking") {
          this.thinking.set(ev.index, { thinking: b.thinking, signature: b.signature ?? "" });
          if (b.thinking) this.part({ text: b.thinking, thought: true });
        } else if (b.type === "redacted_thinking") this.thoughts.push({ type: "redacted_thinking", data: b.data });
        return;
      }
      case "content_block_delta": {
        const d = ev.delta;
        switch (d.type) {
          case "text_delta":
            if (d.text) this.part({ text: d.text });
            return;
          case "thinking_delta": {
            const open = this.thinking.get(ev.index);
            if (open) open.thinking += d.thinking;
            if (d.thinking) this.part({ text: d.thinking, thought: true });
            return;
          }
          case "input_json_delta": {
            const t = this.tools.get(ev.index);
            if (t) t.json += d.partial_json;
            return;
          }
          case "signature_delta": {
            const open = this.thinking.get(ev.index);
            if (open) open.signature += d.signature;
            return;
          }
          case "citations_delta":
            return;
          default: {
            const never: never = d;
            return never;
          }
        }
      }
      case "content_block_stop": {
        const open = this.thinking.get(ev.index);
        if (open) {
          this.thinking.delete(ev.index);
          if (open.signature) this.thoughts.push({ type: "thinking", ...open });
        }
        const t = this.tools.get(ev.index);
        if (!t) return;
        this.tools.delete(ev.index);
        const args = t.json ? tryParseJson(t.json) : {};
        // The turn's signed thinking rides on its first function call, as in the JSON reply.
        const token = this.calls++ === 0 ? encodeThoughtToken(this.thoughts) : undefined;
        this.part({
          functionCall: { id: t.id, name: t.name, args: isRecord(args) ? args : {} },
          ...(token ? { thoughtSignature: token } : {}),
        });
        return;
      }
      case "message_delta":
        this.usage.push(ev);
        this.stop = ev.delta.stop_reason;
        return;
      case "message_stop":
        this.complete();
        return;
      case "ping":
        return;
      case "error":
        this.fail(gatewayErrorFromMessagesError(ev.error));
        return;
      default: {
        const never: never = ev;
        return never;
      }
    }
  }

  /**
   * Goes on from a stream the client has received from a generateContent upstream (a passthrough
   * cut after its 200), after its events were pushed here as pivot events: `chunks` are the relayed
   * chunks' data. The part held back was sent already (the upstream's own chunk carried it), and
   * the chunks to come name the upstream's `responseId`.
   */
  resume(chunks: readonly unknown[]): void {
    this.held = undefined;
    for (const chunk of chunks)
      if (isRecord(chunk) && typeof chunk.responseId === "string") this.responseId = chunk.responseId;
  }

  end(): void {
    if (this.ended) return;
    if (this.stop !== undefined) {
      this.complete();
      return;
    }
    this.fail(
      new GatewayError({
        status: 502,
        type: "api_error",
        message: "The upstream stream ended before the reply was complete",
      }),
    );
  }

  /** A part to send: the one held before it goes out now, this one is held. */
  private part(p: GenerateReplyPart): void {
    if (this.held) this.chunk(this.held);
    this.held = [p];
  }

  private chunk(parts: GenerateReplyPart[], last?: boolean): void {
    const body: GenerateResponse = {
      candidates: [
        {
          content: { role: "model", parts },
          ...(last ? { finishReason: generateFinishReason(this.stop) } : {}),
          index: 0,
        },
      ],
      // The counts are whole only at the end (an upstream may tell the prompt's only then).
      ...(last ? { usageMetadata: generateUsage(this.usage.usage) } : {}),
      modelVersion: this.ctx.model,
      responseId: this.responseId,
    };
    this.ctx.frame(JSON.stringify(body));
  }

  private complete(): void {
    this.chunk(this.held ?? [{ text: "" }], true);
    this.held = undefined;
    this.ended = true;
  }

  private fail(err: GatewayError): void {
    if (this.held) this.chunk(this.held);
    this.held = undefined;
    this.ctx.frame(JSON.stringify(renderGenerateError(err)));
    this.ended = true;
  }
}
