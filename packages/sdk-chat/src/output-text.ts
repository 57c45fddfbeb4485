/** `output_text`, the convenience field the client adds to every response it returns. */
import type { ResponsesResponse } from "@turnpike/schema";
import type { ResponseObject } from "./responses-types.js";

/**
 * The response with `output_text`: the text of every `output_text` part of its message items,
 * in order (docs/protocols.md §5.2). The wire object is copied, not changed.
 *
 * @example
 * ```ts
 * withOutputText(wire).output_text; // "Hello there"
 * ```
 */
export function withOutputText(response: ResponsesResponse): ResponseObject {
  let text = "";
  for (const item of response.output) {
    if (item.type !== "message") continue;
    for (const part of item.content) if (part.type === "output_text") text += part.text;
  }
  return { ...response, output_text: text };
}
