/**
 * What one SSE event of a Responses stream means (docs/protocols.md §5.3): an `error` event is an
 * error sent after the 200, thrown as the `APIError` subclass its `code` stands for; so is a
 * `response.failed` that arrives without one (the gateway sends `error` first, and nothing after
 * `response.failed`). Anything else is an event. A `data: [DONE]` line, which some servers of the
 * format add, ends the stream.
 */
import type { ResponsesStreamEvent, SSEMessage } from "@turnpike/schema";
import { makeStreamError, parseEventJSON, type StreamStep } from "@turnpike/sdk-core";

/**
 * Decodes one event; `model` names the model in a not-found error.
 *
 * @example
 * ```ts
 * decodeResponsesEvent({ event: "error", data: '{"type":"error","code":"rate_limit_error","message":"slow"}' }, res);
 * // → { kind: "error", error: RateLimitError }
 * ```
 */
export function decodeResponsesEvent(
  message: SSEMessage,
  response: Response,
  model?: string,
): StreamStep<ResponsesStreamEvent> {
  if (message.data === "[DONE]") return { kind: "done" };
  const data = parseEventJSON(message);
  const fields = isObject(data) ? data : {};
  if (message.event === "error" || fields.type === "error") {
    // The format puts `code` and `message` on the event itself; a server that nests them in an
    // `error` object, as the other formats do, is read too.
    const inner = isObject(fields.error) ? fields.error : fields;
    return {
      kind: "error",
      error: streamError(
        { code: inner.code ?? inner.type, message: inner.message, param: inner.param },
        response,
        model,
      ),
    };
  }
  if (fields.type === "response.failed") {
    const failed = isObject(fields.response) && isObject(fields.response.error) ? fields.response.error : {};
    return { kind: "error", error: streamError(failed, response, model) };
  }
  // Trusted like every reply body: the server is the gateway, whose encoder writes this shape.
  return { kind: "item", value: data as ResponsesStreamEvent };
}

/**
 * The typed error of an in-band `{code, message, param}`: the code is an error type of either
 * format (`overloaded_error`, `rate_limit_exceeded`, `server_error`, …), put in the shared
 * envelope so that `makeStreamError` maps it to its status like any other stream error.
 */
function streamError(fields: Record<string, unknown>, response: Response, model: string | undefined): Error {
  const code = typeof fields.code === "string" ? fields.code : null;
  const message = typeof fields.message === "string" ? fields.message : "The stream failed.";
  const param = typeof fields.param === "string" ? fields.param : null;
  return makeStreamError({ error: { type: code ?? undefined, code, message, param } }, response.headers, { model });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
