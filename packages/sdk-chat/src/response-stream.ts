/**
 * `client.responses.stream()`: a streamed response with the conveniences of the chat helper —
 * iterate the events or just the text, listen by event name, or await `finalResponse()`, the
 * response rebuilt from the events: each output item from its `output_item.added`, parts and
 * deltas and `output_item.done`, the status and usage from the closing `response.completed` or
 * `response.incomplete` (docs/protocols.md §5.3). The rebuilt items must equal the ones the
 * closing event carries; a server whose events disagree with its own final response is an error,
 * not a silent pick of one side.
 */
import type { ResponsesOutputItem, ResponsesResponse, ResponsesStreamEventType } from "@turnpike/schema";
import { StreamHelper, TurnpikeError, type APIPromise, type Stream } from "@turnpike/sdk-core";
import { withOutputText } from "./output-text.js";
import type { ResponseObject, ResponsesStreamEventOf, ResponseStreamEvent } from "./responses-types.js";

/** Event names a listener can subscribe to: every event of the format but `error`, which fails the stream. */
export type ResponseStreamEventName = Exclude<ResponsesStreamEventType, "error">;

/** Listener arguments of {@link ResponseStream} events (plus `connect`, `error`, `abort`, `end`). */
export type ResponseStreamEvents = {
  [K in ResponseStreamEventName]: [event: ResponsesStreamEventOf<K>, snapshot: ResponsesResponse];
} & {
  /** Every event, with the response as rebuilt so far. */
  event: [event: ResponseStreamEvent, snapshot: ResponsesResponse];
  /** The complete response, once, after the stream ended successfully. */
  finalResponse: [response: ResponseObject];
};

/**
 * @example
 * ```ts
 * const stream = client.responses.stream({ model: "beta-5", input: "Write a haiku" });
 * stream.on("response.output_text.delta", (event) => process.stdout.write(event.delta));
 * const response = await stream.finalResponse();
 * console.log(response.status, response.usage?.output_tokens);
 * ```
 */
export class ResponseStream extends StreamHelper<ResponseStreamEvent, ResponseStreamEvents> {
  #snapshot: ResponsesResponse | undefined;
  #closing: ResponsesResponse | undefined;
  #final: ResponseObject | undefined;

  private constructor() {
    super();
  }

  /** Starts a stream; `open` makes the `stream: true` request with the given signal. */
  static start(
    open: (signal: AbortSignal) => APIPromise<Stream<ResponseStreamEvent>>,
    signal?: AbortSignal,
  ): ResponseStream {
    const stream = new ResponseStream();
    stream.run(open, signal);
    return stream;
  }

  /** The response as rebuilt so far (undefined before `response.created`). */
  get currentResponse(): ResponsesResponse | undefined {
    return this.#snapshot;
  }

  /** The complete response; rejects if the stream failed, was aborted, or ended before its closing event. */
  async finalResponse(): Promise<ResponseObject> {
    await this.done();
    // done() resolved, so finish() ran and set #final.
    return this.#final as ResponseObject;
  }

  /** The text of the final response (`output_text`). */
  async finalText(): Promise<string> {
    return (await this.finalResponse()).output_text;
  }

  protected textOf(event: ResponseStreamEvent): string | undefined {
    return event.type === "response.output_text.delta" ? event.delta : undefined;
  }

  protected accept(event: ResponseStreamEvent): void {
    const snapshot = this.#apply(event);
    if (event.type !== "error") {
      // `event.type` names exactly the listener arguments `[event of that type, snapshot]`.
      const emit = this.emit as (
        name: ResponseStreamEventName,
        ...args: [ResponseStreamEvent, ResponsesResponse]
      ) => void;
      emit.call(this, event.type, event, snapshot);
    }
    this.emit("event", event, snapshot);
  }

  protected finish(): void {
    const closing = this.#closing;
    const snapshot = this.#snapshot;
    if (!closing || !snapshot) {
      throw new TurnpikeError("The stream ended before its response.completed (or response.incomplete) event.");
    }
    // The closing event's output is authoritative on the wire; the rebuilt one must be the same.
    const rebuilt = snapshot.output;
    if (closing.output.length > 0) {
      const diff = firstDifference(rebuilt, closing.output);
      if (diff !== undefined) {
        throw new TurnpikeError(
          `The stream's events built output item ${diff} differently from the item its closing event carries.`,
        );
      }
    }
    const response = withOutputText({ ...closing, output: rebuilt });
    this.#final = response;
    this.emit("finalResponse", response);
  }

  /** Folds one event into the snapshot and returns it. */
  #apply(event: ResponseStreamEvent): ResponsesResponse {
    switch (event.type) {
      case "response.created":
      case "response.in_progress":
        this.#snapshot = {
          ...structuredClone(event.response),
          output: this.#snapshot?.output ?? structuredClone(event.response.output),
        };
        return this.#snapshot;
      case "response.completed":
      case "response.incomplete":
      case "response.failed": {
        this.#closing = event.response;
        const output = this.#snapshot?.output ?? structuredClone(event.response.output);
        this.#snapshot = { ...structuredClone(event.response), output };
        return this.#snapshot;
      }
      default:
        break;
    }
    const snapshot = this.#requireSnapshot(event.type);
    switch (event.type) {
      case "response.output_item.added":
      case "response.output_item.done":
        snapshot.output[event.output_index] = structuredClone(event.item);
        break;
      case "response.content_part.added":
      case "response.content_part.done":
        this.#message(snapshot, event.output_index).content[event.content_index] = structuredClone(event.part);
        break;
      case "response.output_text.delta": {
        const part = this.#message(snapshot, event.output_index).content[event.content_index];
        if (part) part.text += event.delta;
        break;
      }
      case "response.output_text.done": {
        const part = this.#message(snapshot, event.output_index).content[event.content_index];
        if (part) part.text = event.text;
        break;
      }
      case "response.function_call_arguments.delta":
        this.#call(snapshot, event.output_index).arguments += event.delta;
        break;
      case "response.function_call_arguments.done":
        this.#call(snapshot, event.output_index).arguments = event.arguments;
        break;
      case "response.custom_tool_call_input.delta":
        itemOf(snapshot, event.output_index, "custom_tool_call").input += event.delta;
        break;
      case "response.custom_tool_call_input.done":
        itemOf(snapshot, event.output_index, "custom_tool_call").input = event.input;
        break;
      case "response.reasoning_summary_part.added":
      case "response.reasoning_summary_part.done":
        this.#reasoning(snapshot, event.output_index).summary[event.summary_index] = structuredClone(event.part);
        break;
      case "response.reasoning_summary_text.delta": {
        const part = this.#reasoning(snapshot, event.output_index).summary[event.summary_index];
        if (part) part.text += event.delta;
        break;
      }
      case "response.reasoning_summary_text.done": {
        const part = this.#reasoning(snapshot, event.output_index).summary[event.summary_index];
        if (part) part.text = event.text;
        break;
      }
      case "error":
        // The decoder throws on `error` events; a stream built by hand may still hold one.
        break;
      default: {
        const never: never = event;
        throw new TurnpikeError(`Unknown stream event ${JSON.stringify(never)}`);
      }
    }
    return snapshot;
  }

  #requireSnapshot(type: string): ResponsesResponse {
    if (!this.#snapshot) throw new TurnpikeError(`The stream sent ${type} before response.created.`);
    return this.#snapshot;
  }

  #message(snapshot: ResponsesResponse, index: number): Extract<ResponsesOutputItem, { type: "message" }> {
    return itemOf(snapshot, index, "message");
  }

  #call(snapshot: ResponsesResponse, index: number): Extract<ResponsesOutputItem, { type: "function_call" }> {
    return itemOf(snapshot, index, "function_call");
  }

  #reasoning(snapshot: ResponsesResponse, index: number): Extract<ResponsesOutputItem, { type: "reasoning" }> {
    return itemOf(snapshot, index, "reasoning");
  }
}

/** The output item at `index`, which an event about a part of it says is of type `type`. */
function itemOf<T extends ResponsesOutputItem["type"]>(
  snapshot: ResponsesResponse,
  index: number,
  type: T,
): Extract<ResponsesOutputItem, { type: T }> {
  const item = snapshot.output[index];
  if (item?.type !== type) {
    throw new TurnpikeError(
      `The stream sent an event for a ${type} at output index ${index}, where it had opened ${item ? `a ${item.type}` : "no item"}.`,
    );
  }
  // Checked on the line above: the item's `type` is `T`.
  return item as Extract<ResponsesOutputItem, { type: T }>;
}

/** The index of the first item that differs (as JSON values, key order aside), or undefined. */
function firstDifference(a: readonly unknown[], b: readonly unknown[]): number | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (!sameJSON(a[i], b[i])) return i;
  return undefined;
}

function sameJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJSON(v, b[i]));
  // Both are plain JSON objects here (arrays were handled above).
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  const other = Object.keys(y).filter((k) => y[k] !== undefined);
  return keys.length === other.length && keys.every((k) => sameJSON(x[k], y[k]));
}
