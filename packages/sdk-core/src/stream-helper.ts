/**
 * The base of both stream helpers (`MessageStream`, `ChatCompletionStream`): it runs the
 * streamed request in the background, hands each event to the subclass to accumulate, and
 * offers the three ways of reading that the official helpers offer: `for await` over events,
 * `.on(name, listener)`, and promises of the end (`done()`, and the subclass's `final…()`).
 *
 * Events are kept, so an iterator started late still sees the stream from its first event.
 */
import type { APIPromise } from "./api-promise.js";
import { APIUserAbortError, TurnpikeError } from "./errors.js";
import type { Stream } from "./stream.js";

/** Event name → listener arguments. */
export type EventMap = Record<string, unknown[]>;

/** Events every helper emits, whatever its format. */
export interface BaseStreamEvents {
  /** The response headers arrived. */
  connect: [];
  /** The stream failed (the failure also rejects `done()` and the `final…()` promises). */
  error: [error: Error];
  /** `abort()` or the caller's signal cancelled the stream. */
  abort: [error: APIUserAbortError];
  /** Nothing more will be emitted (after success, error or abort). */
  end: [];
}

type Listener<Args extends unknown[]> = (...args: Args) => void;

/**
 * The shared base of `MessageStream` and `ChatCompletionStream`.
 *
 * @example
 * ```ts
 * const stream = client.messages.stream(params); // a StreamHelper subclass
 * stream.on("end", () => console.log("done"));
 * for await (const event of stream) console.log(event.type);
 * await stream.done();
 * ```
 */
export abstract class StreamHelper<TItem, TEvents extends EventMap> implements AsyncIterable<TItem> {
  /** Aborts the request; `abort()` is the short way. */
  readonly controller = new AbortController();
  /** The HTTP response, once connected. */
  response: Response | undefined;
  /** The gateway's request id, once connected. */
  requestId: string | undefined;

  readonly #items: TItem[] = [];
  readonly #listeners: Map<keyof (TEvents & BaseStreamEvents), Array<{ fn: Listener<never[]>; once: boolean }>> =
    new Map();
  #wake: Array<() => void> = [];
  #ended = false;
  #failure: Error | undefined;
  #observed = false;
  readonly #done: Promise<void>;
  #resolveDone!: () => void;
  #rejectDone!: (err: Error) => void;

  protected constructor() {
    this.#done = new Promise<void>((resolve, reject) => {
      this.#resolveDone = resolve;
      this.#rejectDone = reject;
    });
    // Rejections surface through `done()`, iteration or listeners; see #fail for the unobserved case.
    this.#done.catch(() => undefined);
  }

  /** Accumulates one event into the snapshot and emits the helper's own events for it. */
  protected abstract accept(item: TItem): void;
  /** Called once after the last event; emits the final events (e.g. `finalMessage`). */
  protected abstract finish(): void;

  /**
   * Starts `open` on the next microtask, so listeners attached right after construction see
   * every event. `signal` is linked to {@link controller}.
   */
  protected run(open: (signal: AbortSignal) => APIPromise<Stream<TItem>>, signal?: AbortSignal): void {
    if (signal) {
      if (signal.aborted) this.controller.abort(signal.reason);
      else signal.addEventListener("abort", () => this.controller.abort(signal.reason), { once: true });
    }
    queueMicrotask(() => {
      void this.#consume(open);
    });
  }

  async #consume(open: (signal: AbortSignal) => APIPromise<Stream<TItem>>): Promise<void> {
    try {
      const { data: stream, response, requestId } = await open(this.controller.signal).withResponse();
      this.response = response;
      this.requestId = requestId;
      this.#emitBase("connect");
      for await (const item of stream) {
        this.#items.push(item);
        this.accept(item);
        this.#notify();
      }
      if (this.controller.signal.aborted) throw new APIUserAbortError();
      this.finish();
      this.#ended = true;
      this.#notify();
      this.#resolveDone();
      this.#emitBase("end");
    } catch (err) {
      this.#fail(err);
    }
  }

  #fail(err: unknown): void {
    const error =
      this.controller.signal.aborted && !(err instanceof APIUserAbortError)
        ? new APIUserAbortError()
        : err instanceof Error
          ? err
          : new TurnpikeError(String(err));
    this.#failure = error;
    this.#notify();
    this.#rejectDone(error);
    if (error instanceof APIUserAbortError) {
      this.#emitBase("abort", error);
    } else {
      // As in the official helpers: an error nobody listens for or awaits must not vanish.
      if (!this.#observed && !this.#listeners.get("error")?.length) void Promise.reject(error);
      this.#emitBase("error", error);
    }
    this.#emitBase("end");
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const fn of wake) fn();
  }

  /** Cancels the request; `done()` and the `final…()` promises reject with `APIUserAbortError`. */
  abort(): void {
    this.controller.abort();
  }

  /** Resolves when the stream ended successfully; rejects with its error. */
  done(): Promise<void> {
    this.#observed = true;
    return this.#done;
  }

  /** Whether the stream has ended successfully. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Adds a listener. */
  on<K extends keyof (TEvents & BaseStreamEvents)>(
    event: K,
    listener: Listener<(TEvents & BaseStreamEvents)[K]>,
  ): this {
    return this.#add(event, listener, false);
  }

  /** Adds a listener that runs at most once. */
  once<K extends keyof (TEvents & BaseStreamEvents)>(
    event: K,
    listener: Listener<(TEvents & BaseStreamEvents)[K]>,
  ): this {
    return this.#add(event, listener, true);
  }

  /** Removes a listener added with `on` or `once`. */
  off<K extends keyof (TEvents & BaseStreamEvents)>(
    event: K,
    listener: Listener<(TEvents & BaseStreamEvents)[K]>,
  ): this {
    const list = this.#listeners.get(event);
    if (list) {
      this.#listeners.set(
        event,
        // Compared by identity with the form #add stored it in.
        list.filter((l) => l.fn !== (listener as Listener<never[]>)),
      );
    }
    return this;
  }

  #add<K extends keyof (TEvents & BaseStreamEvents)>(
    event: K,
    listener: Listener<(TEvents & BaseStreamEvents)[K]>,
    once: boolean,
  ): this {
    const list = this.#listeners.get(event) ?? [];
    // Stored under a common signature; `emit` passes exactly the arguments declared for `event`.
    list.push({ fn: listener as Listener<never[]>, once });
    this.#listeners.set(event, list);
    return this;
  }

  /** Calls the listeners of `event`. */
  protected emit<K extends keyof (TEvents & BaseStreamEvents)>(
    event: K,
    ...args: (TEvents & BaseStreamEvents)[K]
  ): void {
    this.#dispatch(event, args);
  }

  #emitBase<K extends keyof BaseStreamEvents>(event: K, ...args: BaseStreamEvents[K]): void {
    this.#dispatch(event, args);
  }

  #dispatch(event: keyof (TEvents & BaseStreamEvents), args: unknown[]): void {
    const list = this.#listeners.get(event);
    if (!list?.length) return;
    this.#listeners.set(
      event,
      list.filter((l) => !l.once),
    );
    for (const { fn } of list) {
      // See #add: each listener was registered for exactly the arguments of `event`.
      (fn as (...a: unknown[]) => void)(...args);
    }
  }

  /** Every event of the stream, from the first; leaving the loop early aborts the request. */
  async *[Symbol.asyncIterator](): AsyncIterator<TItem> {
    this.#observed = true;
    let index = 0;
    let finished = false;
    try {
      while (true) {
        if (index < this.#items.length) {
          // In range: checked on the line above.
          yield this.#items[index++] as TItem;
          continue;
        }
        if (this.#failure) throw this.#failure;
        if (this.#ended) {
          finished = true;
          return;
        }
        await new Promise<void>((resolve) => this.#wake.push(resolve));
      }
    } finally {
      if (!finished && !this.#failure) this.abort();
    }
  }

  /** Only the text deltas, in order. */
  get textStream(): AsyncIterable<string> {
    const source = this;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const item of source) {
          const text = source.textOf(item);
          if (text) yield text;
        }
      },
    };
  }

  /** The text an event adds to the reply, if any. */
  protected abstract textOf(item: TItem): string | undefined;
}
