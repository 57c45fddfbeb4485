import {
  ChatToMessagesMachine,
  GenerateToMessagesMachine,
  MessagesSSEMachine,
  MessagesToChatMachine,
  formatMessagesEvent,
  type SignatureStore,
} from "@turnpike/providers";
import type { MessagesStreamEvent } from "@turnpike/schema";
import { SSEParser } from "@turnpike/schema/sse";
import type { Protocol } from "../routing/catalog";
import type { Meter } from "../usage/meter";
import type { Dialect } from "./dialect";
import type { InlineTap } from "./passthrough-tap";
import { readPivotEvent } from "./tap-pivot";

export interface TranslatedStreamContext {
  /** The model id the client asked for. */
  model: string;
  /** Prompt tokens counted before the first byte (for `message_start`). */
  inputTokens: number;
  stopSequences: readonly string[] | undefined;
  toolNames: Record<string, string> | undefined;
  signatures: SignatureStore;
  /** The chat client asked for the usage chunk. */
  includeUsage: boolean;
}

/**
 * A translated stream as one inline step of the relay: upstream bytes → SSE → the upstream
 * protocol's state machine → pivot events (metered) → the client's frames. The machines are the
 * same ones the providers' TransformStreams wrap; run back to back here, a chunk crosses no
 * stream boundary between them, and each upstream chunk becomes at most one write.
 */
export function translatedTap(protocol: Protocol, dialect: Dialect, ctx: TranslatedStreamContext, meter: Meter): InlineTap {
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  let pending = "";
  const write = (frame: string) => {
    pending += frame;
  };
  const toChat = dialect === "chat" ? new MessagesToChatMachine({ model: ctx.model, includeUsage: ctx.includeUsage }, write) : undefined;
  const onPivot = (ev: MessagesStreamEvent) => {
    readPivotEvent(meter, ev);
    if (toChat) toChat.push(ev);
    else write(formatMessagesEvent(ev));
  };
  const streamCtx = { model: ctx.model, inputTokens: ctx.inputTokens, stopSequences: ctx.stopSequences, toolNames: ctx.toolNames };
  const upstream =
    protocol === "chat"
      ? new ChatToMessagesMachine(streamCtx, onPivot)
      : protocol === "generate"
        ? new GenerateToMessagesMachine({ ...streamCtx, signatures: ctx.signatures }, onPivot)
        : new MessagesSSEMachine({}, onPivot);
  const flush = (enqueue: (piece: string) => void) => {
    if (!pending) return;
    enqueue(pending);
    pending = "";
  };
  return {
    push(chunk, enqueue) {
      for (const msg of parser.push(decoder.decode(chunk, { stream: true }))) upstream.push(msg);
      flush(enqueue);
    },
    end(enqueue) {
      const rest = decoder.decode();
      for (const msg of rest ? parser.push(rest) : []) upstream.push(msg);
      for (const msg of parser.end()) upstream.push(msg);
      upstream.end();
      toChat?.end();
      flush(enqueue);
    },
  };
}
