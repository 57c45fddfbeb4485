/**
 * A reply's `cutAfter` as the renderers take it: the gateway's in-band error of a stream it could
 * not continue becomes the reply's `streamError` (each format already writes one as the gateway
 * does); a reset is left to the SSE writer (sse-response.ts), which drops the connection.
 */
import { type MockReply, STREAM_FAILED_MESSAGE } from "./mock-reply.js";

/** `reply` with its cut made a `streamError` where it ends with the in-band error; a bad cut is a TypeError. */
export function withCut(reply: MockReply): MockReply {
  const after = reply.cutAfter;
  if (after === undefined) {
    if (reply.cut !== undefined)
      throw new TypeError("`cut` says how a stream cut by `cutAfter` ends: set `cutAfter` too.");
    return reply;
  }
  if (!Number.isInteger(after) || after < 0)
    throw new TypeError(`\`cutAfter\` must be a whole number of events (0 or more); received ${String(after)}.`);
  if (reply.streamError) throw new TypeError("`cutAfter` and `streamError` both end the stream: script one of them.");
  const cut = reply.cut ?? "error";
  if (cut === "reset") return reply;
  if (cut !== "error") throw new TypeError(`\`cut\` must be "error" or "reset"; received ${JSON.stringify(cut)}.`);
  // The gateway's own ending (apps/gateway/src/relay/continuing-tap.ts): a 500-class `api_error`
  // (`server_error` in the chat envelope, `INTERNAL` in the generateContent one) with its message.
  return { ...reply, streamError: { status: 500, message: STREAM_FAILED_MESSAGE, afterEvents: after } };
}
