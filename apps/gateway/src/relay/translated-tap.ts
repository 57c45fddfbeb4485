import type { MessagesStreamEvent } from "@turnpike/schema";
import type { GuardrailRun } from "../guardrails/run";
import { StreamRestorer } from "../guardrails/pivot";
import { SSEParser, type SSEMessage } from "@turnpike/schema/sse";
import type { ClientRequest, PivotEncoder } from "../formats";
import type { UpstreamProtocol } from "../protocols";
import type { ReplyContext } from "../protocols/upstream-protocol";
import { chunkDecoder, type InlineTap } from "./passthrough-tap";
import { readPivotEvent } from "./tap-pivot";
import type { StreamSpan } from "./stream-span";
import type { UsageSink } from "../vocabulary/usage-sink";

/** The client's side of a translated stream: pivot events in, the client's frames held until flushed. */
export interface ClientSide {
  /** One pivot event, as the client is to receive it. */
  push(ev: MessagesStreamEvent): void;
  /** The frames written since the last flush, as one piece. */
  flush(enqueue: (piece: string) => void): void;
  /** The encoder's end (a stream that ended without its terminal event gets the client's own error). */
  end(): void;
  /** The upstream was cut and is to be continued: text held back (the guardrails') is dropped, never sent. */
  discard(): void;
  /** The encoder's own going on from a passthrough's relayed events, where it has one ({@link PivotEncoder.resume}). */
  resume?: PivotEncoder["resume"];
}

/**
 * Pivot events → the guardrails' restorer (when the request has one) → the span of what the client
 * has received (when the route continues cut streams) → the client request's encoder. One place
 * for both readers of a stream's text (DESIGN §11): neither costs a stream that does not need it.
 */
export function clientSide(client: ClientRequest, model: string, guard?: GuardrailRun, span?: StreamSpan): ClientSide {
  let pending = "";
  const encoder = client.encoder(model, (frame) => {
    pending += frame;
  });
  // With guardrails, the pivot events pass the restorer on their way to the encoder: the client
  // gets its own values back, a placeholder split over two deltas restored whole, and what the
  // reply policies find in the model's text masked.
  const restorer = guard && (guard.restore.size || guard.readsReply) ? new StreamRestorer(guard) : undefined;
  const push = span
    ? (ev: MessagesStreamEvent) => {
        span.see(ev);
        encoder.push(ev);
      }
    : (ev: MessagesStreamEvent) => encoder.push(ev);
  return {
    push: restorer ? (ev) => restorer.push(ev, push) : push,
    flush(enqueue) {
      if (!pending) return;
      enqueue(pending);
      pending = "";
    },
    end: () => encoder.end(),
    discard: () => restorer?.discard(),
    ...(encoder.resume ? { resume: (events: readonly unknown[]) => encoder.resume!(events) } : {}),
  };
}

/** What a continued stream needs of its first, translated attempt (relay/continuing-tap.ts). */
export interface TranslatedHooks {
  /** The span of what the client received, kept by a side this tap makes. */
  span?: StreamSpan;
  /** The upstream's in-band error: it is not relayed, and nothing of this upstream is after it. */
  onCut(ev?: MessagesStreamEvent): void;
  /** A continuation's: the client's side the first attempt made, written to again. */
  side?: ClientSide;
  /** A continuation's: its events made part of the client's stream on their way to the side. */
  rebase?(ev: MessagesStreamEvent, emit: (ev: MessagesStreamEvent) => void): void;
}

/** A translated stream's tap, with what a continuation reaches into. */
export interface TranslatedTap extends InlineTap {
  side: ClientSide;
  /** The upstream's end read (its machine ended) without ending the client's side. */
  drain(): void;
}

/**
 * A translated stream as one inline step of the relay: upstream bytes → SSE → the upstream
 * protocol's state machine → pivot events (metered) → the client request's encoder. Run back to
 * back here, a chunk crosses no stream boundary between them, and each upstream chunk becomes at
 * most one write (decisions/0005-inline-stream-taps.md).
 */
export function translatedTap(
  protocol: UpstreamProtocol,
  client: ClientRequest,
  ctx: ReplyContext,
  sink: UsageSink,
  audit: (json: string) => void = () => {},
  guard?: GuardrailRun,
  hooks?: TranslatedHooks,
): TranslatedTap {
  const decode = chunkDecoder();
  const parser = new SSEParser();
  const side = hooks?.side ?? clientSide(client, ctx.model, guard, hooks?.span);
  const rebase = hooks?.rebase;
  // A reply is complete only if the upstream's machine reached `message_stop`; an error or a
  // stream cut short ends without it.
  let stopped = false;
  // With a continuation behind it, an in-band error ends this upstream's part, unrelayed.
  let cut = false;
  const upstream = protocol.machine(
    ctx,
    hooks
      ? (ev) => {
          if (cut) return;
          if (ev.type === "error") {
            cut = true;
            return hooks.onCut(ev);
          }
          if (ev.type === "message_stop") stopped = true;
          readPivotEvent(sink, ev);
          if (rebase) rebase(ev, side.push);
          else side.push(ev);
        }
      : (ev) => {
          if (ev.type === "message_stop") stopped = true;
          readPivotEvent(sink, ev);
          side.push(ev);
        },
  );
  // The vendor's own name of the model, from the first event that says it (for the record).
  let named = false;
  /** One upstream event: its raw usage shown to `audit` (before the machine rounds it), then translated. */
  const see = (msg: SSEMessage) => {
    audit(msg.data); // a frame without usage is ruled out by the audit's own first search
    if (!named) {
      const model = protocol.streamModel(msg.data);
      if (model !== undefined) {
        named = true;
        sink.answeredBy?.(model);
      }
    }
    upstream.push(msg);
  };
  let drained = false;
  const drain = () => {
    if (drained) return;
    drained = true;
    const rest = decode(new Uint8Array(0), true);
    for (const msg of rest ? parser.push(rest) : []) see(msg);
    for (const msg of parser.end()) see(msg);
    upstream.end();
  };
  return {
    side,
    drain,
    failed: () => !stopped,
    push(chunk, enqueue) {
      for (const msg of parser.push(decode(chunk))) see(msg);
      side.flush(enqueue);
    },
    end(enqueue) {
      drain();
      side.end();
      side.flush(enqueue);
    },
  };
}
