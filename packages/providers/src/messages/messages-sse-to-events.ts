/**
 * A messages-format upstream stream (decoded SSE) → typed events. Dispatches on the `event:`
 * line like the official client (falling back to the JSON `type`), keeps `ping`, turns
 * `event: error` into an `error` event, ignores a duplicate `message_start` (same id; another id
 * is an error, docs/protocols.md §4.9 trap 8), and ends an interrupted stream (EOF without
 * `message_stop` or `error`) with an in-band `api_error`. Unknown event types are skipped.
 */
import { MESSAGES_STREAM_EVENT_TYPES, type MessagesStreamEvent } from "@turnpike/schema";
import { MachineStream } from "../stream-transformer.js";
import type { SSEMessage } from "@turnpike/schema/sse";
import { GatewayError, renderMessagesError } from "../errors.js";
import { isRecord, tryParseJson } from "../json.js";
import { messagesUsageFields, messagesUsageToTotals, type OnUsage, type UsageTotals } from "../usage.js";

export interface MessagesSSEOptions {
  /** Called once at the end (or on cancel) with the final usage. */
  onUsage?: OnUsage | undefined;
}

/**
 * Follows usage through a messages-format event stream: input and cache counts from
 * `message_start`, cumulative totals from each `message_delta` (overwrite, never add; a
 * `message_delta` without input fields keeps the start's, as Bedrock-style streams need, §1.7).
 */
export class MessagesUsageAccumulator {
  private totals: UsageTotals = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };

  push(ev: { type: string; message?: { usage?: unknown }; usage?: unknown }): void {
    if (ev.type === "message_start" && ev.message) {
      this.totals = messagesUsageToTotals(ev.message.usage);
    } else if (ev.type === "message_delta" && isRecord(ev.usage)) {
      // Fields the delta carries overwrite; the ones it leaves out stand.
      this.totals = { ...this.totals, ...messagesUsageFields(ev.usage) };
    }
  }

  get usage(): UsageTotals {
    return { ...this.totals };
  }
}

/** The state machine behind {@link MessagesSSEEventStream}: decoded SSE in, typed events out. */
export class MessagesSSEMachine {
  readonly #usage = new MessagesUsageAccumulator();
  #ended = false;
  #reported = false;
  #messageId: string | undefined;

  constructor(
    private readonly opts: MessagesSSEOptions,
    private readonly emit: (ev: MessagesStreamEvent) => void,
  ) {}

  #report(): void {
    if (this.#reported) return;
    this.#reported = true;
    this.opts.onUsage?.(this.#usage.usage);
  }

  push(msg: SSEMessage): void {
    if (this.#ended) return;
    const data = tryParseJson(msg.data);
    const name = msg.event ?? (isRecord(data) && typeof data.type === "string" ? data.type : undefined);
    if (name === "error") {
      const err = isRecord(data) && isRecord(data.error) ? data.error : {};
      this.emit({
        type: "error",
        error: {
          type: typeof err.type === "string" ? err.type : "api_error",
          message: typeof err.message === "string" ? err.message : msg.data.slice(0, 200),
        },
      });
      this.#ended = true;
      this.#report();
      return;
    }
    if (!name || !MESSAGES_STREAM_EVENT_TYPES.some((t) => t === name) || !isRecord(data)) return;
    // The payload's own type is the event name (§1.7); trust the event line when they differ.
    // A known event type; its payload is trusted like any upstream reply (the fields relied on below are checked).
    const ev = { ...data, type: name } as MessagesStreamEvent;
    if (ev.type === "message_start") {
      // A second message_start: the same id is a duplicate to ignore; another id would splice
      // two generations into one reply (§4.9 trap 8).
      const id = isRecord(ev.message) && typeof ev.message.id === "string" ? ev.message.id : "";
      if (this.#messageId !== undefined) {
        if (id === this.#messageId) return;
        this.emit({
          type: "error",
          error: { type: "api_error", message: "The upstream started a second message in the same stream" },
        });
        this.#ended = true;
        this.#report();
        return;
      }
      this.#messageId = id;
    }
    this.#usage.push(ev);
    this.emit(ev);
    if (ev.type === "message_stop") {
      this.#ended = true;
      this.#report();
    }
  }

  end(): void {
    if (!this.#ended) {
      const err = new GatewayError({
        status: 502,
        type: "api_error",
        message: "The upstream stream ended before message_stop",
      });
      this.emit({ type: "error", error: renderMessagesError(err).error });
    }
    this.#report();
  }

  cancel(): void {
    this.#report();
  }

  usage(): UsageTotals {
    return this.#usage.usage;
  }
}

export class MessagesSSEEventStream extends MachineStream<SSEMessage, MessagesStreamEvent, MessagesSSEMachine> {
  constructor(opts: MessagesSSEOptions = {}) {
    super((emit) => new MessagesSSEMachine(opts, emit));
  }
}

/**
 * @example
 * ```ts
 * const events = upstream.body!.pipeThrough(new SSEDecoderStream()).pipeThrough(messagesSSEToEvents());
 * ```
 */
export function messagesSSEToEvents(opts: MessagesSSEOptions = {}): MessagesSSEEventStream {
  return new MessagesSSEEventStream(opts);
}
