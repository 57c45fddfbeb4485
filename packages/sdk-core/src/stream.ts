/**
 * The async-iterable stream that `create({ stream: true })` resolves to. It reads the SSE body
 * through the repo's one decoder (`SSEDecoderStream`, so events and UTF-8 characters split
 * across network reads survive) and lets each SDK say what one event means: an item, nothing,
 * the end, or an error in-band.
 */
import { SSEDecoderStream, type SSEMessage } from "@turnpike/schema/sse";
import { TurnpikeError } from "./errors.js";

/** What one SSE event means to an SDK. */
export type StreamStep<T> =
  | { kind: "item"; value: T }
  | { kind: "skip" }
  | { kind: "done" }
  | { kind: "error"; error: Error };

/** Maps one decoded SSE event to a {@link StreamStep}. */
export type SSEEventDecoder<T> = (message: SSEMessage, response: Response) => StreamStep<T>;

/**
 * Events of one streamed reply, in order. Iterate it once (or `tee()` it first); leaving the
 * loop early, or calling `controller.abort()`, cancels the request.
 *
 * @example
 * ```ts
 * const stream = await client.messages.create({ ...params, stream: true });
 * for await (const event of stream) {
 *   if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
 *     process.stdout.write(event.delta.text);
 *   }
 * }
 * ```
 */
export class Stream<T> implements AsyncIterable<T> {
  /** Aborts the underlying request. */
  readonly controller: AbortController;
  /** The HTTP response the events are read from (status, headers). */
  readonly response: Response;
  readonly #iterate: () => AsyncIterator<T>;
  #consumed = false;

  constructor(iterate: () => AsyncIterator<T>, controller: AbortController, response: Response) {
    this.#iterate = iterate;
    this.controller = controller;
    this.response = response;
  }

  /** A stream over the SSE body of `response`, decoded by `decode`. */
  static fromSSEResponse<T>(
    response: Response,
    controller: AbortController,
    decode: SSEEventDecoder<T>,
    onFinish?: () => void,
  ): Stream<T> {
    async function* iterate(): AsyncGenerator<T> {
      if (!response.body) {
        onFinish?.();
        throw new TurnpikeError("The streamed response has no body.");
      }
      const reader = response.body.pipeThrough(new SSEDecoderStream()).getReader();
      // Ends a pending read on abort even if the `fetch` in use does not tie the body to its signal.
      const onAbort = (): void => {
        reader.cancel(controller.signal.reason).catch(() => undefined);
      };
      controller.signal.addEventListener("abort", onAbort, { once: true });
      let finished = false;
      try {
        while (true) {
          const { value, done } = await reader.read();
          if (done) break;
          const step = decode(value, response);
          if (step.kind === "item") yield step.value;
          else if (step.kind === "error") throw step.error;
          else if (step.kind === "done") break;
        }
        finished = true;
      } catch (err) {
        // `stream.controller.abort()` ends the iteration quietly, as in the official clients.
        if (controller.signal.aborted) return;
        throw err;
      } finally {
        // Leaving early (break, throw, done marker) must release the connection.
        controller.signal.removeEventListener("abort", onAbort);
        if (!finished) controller.abort();
        reader.cancel().catch(() => undefined);
        reader.releaseLock();
        onFinish?.();
      }
    }
    return new Stream(iterate, controller, response);
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#consumed) {
      throw new TurnpikeError("This stream has already been iterated; use `tee()` to read it twice.");
    }
    this.#consumed = true;
    return this.#iterate();
  }

  /** Splits the stream into two that each see every event. */
  tee(): [Stream<T>, Stream<T>] {
    const queues: [Array<Promise<IteratorResult<T>>>, Array<Promise<IteratorResult<T>>>] = [[], []];
    let source: AsyncIterator<T> | undefined;
    const branch =
      (mine: Array<Promise<IteratorResult<T>>>): (() => AsyncIterator<T>) =>
      () => ({
        next: () => {
          if (mine.length === 0) {
            source ??= this[Symbol.asyncIterator]();
            const result = source.next();
            queues[0].push(result);
            queues[1].push(result);
          }
          // Non-empty: filled just above or by the other branch.
          return mine.shift() as Promise<IteratorResult<T>>;
        },
      });
    return [
      new Stream(branch(queues[0]), this.controller, this.response),
      new Stream(branch(queues[1]), this.controller, this.response),
    ];
  }

  /** The events as newline-delimited JSON bytes, e.g. to forward to a browser. */
  toReadableStream(): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    // Taken now, as a `start` callback would (the constructor runs it synchronously).
    const iterator = this[Symbol.asyncIterator]();
    return new ReadableStream<Uint8Array>({
      pull: async (ctrl) => {
        try {
          const next = await iterator.next();
          if (next.done) ctrl.close();
          else ctrl.enqueue(encoder.encode(JSON.stringify(next.value) + "\n"));
        } catch (err) {
          ctrl.error(err);
        }
      },
      cancel: async () => {
        await iterator.return?.();
      },
    });
  }
}

/**
 * Parses an event's JSON, naming the event on failure.
 *
 * @example
 * ```ts
 * const data = parseEventJSON({ event: "ping", data: '{"type":"ping"}' });
 * ```
 */
export function parseEventJSON(message: SSEMessage): unknown {
  try {
    return JSON.parse(message.data);
  } catch (cause) {
    throw new TurnpikeError(
      `Could not parse stream event ${message.event ?? "(no event name)"} as JSON: ${message.data}`,
      {
        cause,
      },
    );
  }
}
