/**
 * What one SSE event of a chat-completions stream means (docs/protocols.md §2.6): `data: [DONE]`
 * ends it; `event: error`, or any data object with an `error` key, is an error sent after the
 * 200 and is thrown as the `APIError` subclass its type or code stands for (the official client
 * throws on both too); anything else is a chunk.
 */
import type { SSEMessage } from "@turnpike/schema";
import { makeStreamError, parseEventJSON, type StreamStep } from "@turnpike/sdk-core";
import type { ChatCompletionChunk } from "./types.js";

/** The end-of-stream marker. */
export const DONE = "[DONE]";

/** Decodes one event; `model` names the model in a not-found error. */
export function decodeChatEvent(
  message: SSEMessage,
  response: Response,
  model?: string,
): StreamStep<ChatCompletionChunk> {
  if (message.data === DONE) return { kind: "done" };
  const data = parseEventJSON(message);
  if (message.event === "error" || hasErrorKey(data)) {
    return { kind: "error", error: makeStreamError(data, response.headers, { model }) };
  }
  // Trusted like every reply body: the server is the gateway, whose encoder writes this shape.
  return { kind: "item", value: data as ChatCompletionChunk };
}

function hasErrorKey(data: unknown): boolean {
  return typeof data === "object" && data !== null && "error" in data && data.error != null;
}
