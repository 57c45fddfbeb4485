/**
 * What a scripted reply says, in one vocabulary for both formats: the mock renders it as a
 * messages-format reply or a chat-completions reply, JSON or SSE, whichever the request asked.
 */
import type { StopReason } from "@turnpike/schema";

/** A tool call the mocked model makes. */
export interface MockToolCall {
  name: string;
  input: Record<string, unknown>;
  /** Defaults to a generated `toolu_…` / `call_…` id. */
  id?: string;
}

/** An error reply (before any byte, as JSON in the caller's format) or an in-stream error. */
export interface MockError {
  /** HTTP status; it also picks the error `type`/`code` each format uses for it. */
  status: number;
  message?: string;
  /** Overrides the format's error type for `status`. */
  type?: string;
  /** Chat format `code`; defaults to the one for `status` (e.g. `model_not_found` for 404). */
  code?: string;
  /** Chat format `param`: the field the error is about (default `null`). */
  param?: string;
  /** Sets `retry-after` (seconds). */
  retryAfter?: number;
  /** Extra response headers, e.g. `{ "x-should-retry": "false" }`. */
  headers?: Record<string, string>;
}

/**
 * How a cut stream ends: `"error"`, the gateway's in-band error of the caller's format (its
 * message {@link STREAM_FAILED_MESSAGE}); `"reset"`, the connection reset mid-body.
 */
export type MockCut = "error" | "reset";

/** The message of the in-band error the gateway ends a stream with when no continuation could save it. */
export const STREAM_FAILED_MESSAGE = "The upstream stream failed before the reply was complete.";

/**
 * One scripted reply.
 *
 * @example
 * ```ts
 * turnpike.reply({ text: "Paris" });
 * turnpike.reply({ toolCalls: [{ name: "get_weather", input: { city: "Paris" } }] });
 * turnpike.reply({ error: { status: 429, retryAfter: 1 } });
 * turnpike.reply({ text: "Hello", streamError: { status: 529, afterEvents: 2 } });
 * turnpike.reply({ text: "Hello there", cutAfter: 3, cut: "reset" });
 * ```
 */
export interface MockReply {
  /** The reply text (default `"Hello from the Turnpike mock."`). */
  text?: string;
  /** Thinking text, sent before the reply text (messages format, and a `reasoning` item in the Responses format; chat has no field for it). */
  thinking?: string;
  /** Tool calls, after the text. */
  toolCalls?: MockToolCall[];
  /** Defaults to `tool_use` when there are tool calls, else `end_turn`; chat maps it (docs/protocols.md §4.3). */
  stopReason?: StopReason;
  /** Token counts; by default estimated from the text (about 4 characters a token). */
  usage?: { input_tokens?: number; output_tokens?: number };
  /** Answer with this error instead, as the gateway would: JSON in the caller's format. */
  error?: MockError;
  /** Fail at the network level (`fetch` rejects), as when the gateway is down. */
  networkError?: boolean;
  /**
   * Stream only: after this many events, send an in-band error and end the stream (the Responses
   * format keeps at least its first two events, and ends with `error` then `response.failed`).
   */
  streamError?: MockError & { afterEvents?: number };
  /**
   * Stream only: end the stream after this many events as the gateway ends a stream that broke
   * after its 200 and that it could not continue on another deployment (its `routing.continuation`
   * gave up): with the caller format's in-band error (`cut: "error"`, the default) or with the
   * connection reset (`cut: "reset"`: reading the body fails). Not with `streamError`.
   *
   * @example
   * ```ts
   * turnpike.reply({ text: "a b c d e", cutAfter: 4 });                // the gateway's in-band error
   * turnpike.reply({ text: "a b c d e", cutAfter: 4, cut: "reset" });  // the connection drops
   * ```
   */
  cutAfter?: number;
  /** How a stream cut by {@link MockReply.cutAfter} ends (default `"error"`). */
  cut?: MockCut;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
  /** Stream only: milliseconds between written pieces. */
  chunkDelayMs?: number;
  /** Stream only: write the SSE body in pieces of this many bytes (splits events and UTF-8 characters). */
  chunkSize?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
}
