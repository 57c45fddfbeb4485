/**
 * What one SSE event of a messages-format stream means (docs/protocols.md §1.7). Like the official
 * client it dispatches on the `event:` line; a server that sends only `data:` lines is still
 * read, by the JSON `type` (the gateway writes both). `ping` is skipped, `error` is thrown as
 * the `APIError` subclass its type stands for, and unknown events are skipped so that new event
 * types do not break old clients.
 */
import type { SSEMessage } from "@turnpike/schema";
import { makeStreamError, parseEventJSON, type StreamStep } from "@turnpike/sdk-core";
import type { RawMessageStreamEvent } from "./types.js";

/** The events a stream yields; `ping` and `error` are handled apart. */
const YIELDED: ReadonlySet<string> = new Set<RawMessageStreamEvent["type"]>([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
]);

/** Decodes one event; `model` names the model in a not-found error. */
export function decodeMessagesEvent(
  message: SSEMessage,
  response: Response,
  model?: string,
): StreamStep<RawMessageStreamEvent> {
  if (message.event === "ping") return { kind: "skip" };
  const data = parseEventJSON(message);
  const name = message.event ?? typeOf(data);
  if (name === "error") return { kind: "error", error: makeStreamError(data, response.headers, { model }) };
  if (name === undefined || !YIELDED.has(name)) return { kind: "skip" };
  // Trusted like every reply body: the server is the gateway, whose encoder writes these shapes.
  return { kind: "item", value: data as RawMessageStreamEvent };
}

function typeOf(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const type = "type" in data ? data.type : undefined;
  return typeof type === "string" ? type : undefined;
}
