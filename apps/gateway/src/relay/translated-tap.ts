import type { MessagesStreamEvent } from "@turnpike/schema";
import type { GuardrailRun } from "../guardrails/run";
import { StreamRestorer } from "../guardrails/pivot";
import { SSEParser, type SSEMessage } from "@turnpike/schema/sse";
import type { ClientRequest } from "../formats";
import type { UpstreamProtocol } from "../protocols";
import type { ReplyContext } from "../protocols/upstream-protocol";
import { chunkDecoder, type InlineTap } from "./passthrough-tap";
import { readPivotEvent } from "./tap-pivot";
import type { UsageSink } from "../vocabulary/usage-sink";

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
): InlineTap {
  const decode = chunkDecoder();
  const parser = new SSEParser();
  let pending = "";
  const encoder = client.encoder(ctx.model, (frame) => {
    pending += frame;
  });
  // With guardrails, the pivot events pass the restorer on their way to the encoder: the client
  // gets its own values back, a placeholder split over two deltas restored whole, and what the
  // reply policies find in the model's text masked.
  const restorer = guard && (guard.restore.size || guard.readsReply) ? new StreamRestorer(guard) : undefined;
  const push = (ev: MessagesStreamEvent) => encoder.push(ev);
  const toClient = restorer ? (ev: MessagesStreamEvent) => restorer.push(ev, push) : push;
  // A reply is complete only if the upstream's machine reached `message_stop`; an error or a
  // stream cut short ends without it.
  let stopped = false;
  const upstream = protocol.machine(ctx, (ev) => {
    if (ev.type === "message_stop") stopped = true;
    readPivotEvent(sink, ev);
    toClient(ev);
  });
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
  const flush = (enqueue: (piece: string) => void) => {
    if (!pending) return;
    enqueue(pending);
    pending = "";
  };
  return {
    failed: () => !stopped,
    push(chunk, enqueue) {
      for (const msg of parser.push(decode(chunk))) see(msg);
      flush(enqueue);
    },
    end(enqueue) {
      const rest = decode(new Uint8Array(0), true);
      for (const msg of rest ? parser.push(rest) : []) see(msg);
      for (const msg of parser.end()) see(msg);
      upstream.end();
      encoder.end();
      flush(enqueue);
    },
  };
}
