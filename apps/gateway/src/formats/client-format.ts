import type { GatewayError, Warning } from "@turnpike/providers";
import type { MessagesRequest, MessagesResponse, MessagesStreamEvent, Protocol } from "@turnpike/schema";
import type { Admission } from "../vocabulary/admission";
import type { StoredResponse } from "../vocabulary/stored-response";
import type { Endpoint, Format } from "../vocabulary/format";

import type { CatalogEntry } from "../vocabulary/target";

/**
 * A validated client request, whatever its format: the few facts the pipeline reads, plus the
 * format's own conversion to the pivot. The format-specific body stays inside the adapter.
 */
export interface ClientRequest {
  readonly model: string;
  readonly stream: boolean;
  /** The body as the client sent it (a passthrough forwards it). */
  readonly body: Readonly<Record<string, unknown>>;
  /** The client asked for usage inside the stream (the chat format's `include_usage`). */
  readonly includeUsage: boolean;
  /** The request in the pivot (messages) format, judged for the upstream protocol `target`. */
  toPivot(target: Protocol): { request: MessagesRequest; warnings: Warning[] };
  /** The pivot reply in the client's format (a reply may echo its request, hence here). */
  encodeReply(reply: MessagesResponse, model: string): unknown;
  /** The paid service tier the call was sent at (none: the default tier): a reply that names its tier says so. */
  servedAt?(tier: string): void;
  /** A stream encoder: pivot events in, the client's SSE frames out through `write`. */
  encoder(model: string, write: (frame: string) => void): PivotEncoder;
  /** The id of a stored reply this request continues (the Responses format's `previous_response_id`). */
  readonly continues?: string;
  /** This request with the stored conversation it continues put before its own input. */
  continueFrom?(stored: StoredResponse): ClientRequest;
  /**
   * The opaque proofs of the thinking in this request's history (the messages format's thinking
   * signatures and redacted data), which only the deployment that wrote them accepts back.
   */
  thinkingProofs?(): string[];
  /** This request without the thinking whose proof `drop` names, and how many blocks went (undefined: none did). */
  withoutThinking?(drop: (proof: string) => boolean): { request: ClientRequest; dropped: number } | undefined;
  /** The upstream's own reply, when it passed through (what {@link toStore} keeps then). */
  passedThrough?(reply: Record<string, unknown>): void;
  /** What to store once the reply is written (undefined: nothing, or the client said `store: false`). */
  toStore?(): { response: Record<string, unknown>; inputItems: unknown[] } | undefined;
  /**
   * The in-band error of this request's stream, where it must say more than its format's
   * ({@link ClientFormat.inBandError}): a Responses stream ends in `response.failed` carrying
   * the response it was writing.
   */
  inBandError?(message: string): string;
}

/** Writes the client's stream frames from pivot events. */
export interface PivotEncoder {
  push(ev: MessagesStreamEvent): void;
  end(): void;
  /**
   * Goes on from a stream of this format that an upstream wrote and the client has received (a
   * passthrough cut after its 200, relay/continuing-tap.ts), once its events were pushed here as
   * pivot events: `events` are the relayed events' data, parsed, in order. From here on the
   * encoder writes in the upstream's terms (its ids, indexes and numbering). Returns whether the
   * client's last text part is still open (a continuation's first text goes on in it), or
   * undefined where this stream cannot be gone on with. Absent: the replayed pivot events were
   * all the encoder needed.
   */
  resume?(events: readonly unknown[]): { textOpen: boolean } | undefined;
}

/**
 * Everything Turnpike knows about one client wire format, in one place: the registry
 * (`formats/index.ts`) is a `Record<Format, ClientFormat>`, so the compiler proves that every
 * format covers every concern, and no code outside an adapter branches on a format's name.
 */
export interface ClientFormat {
  readonly id: Format;
  /** The ledger's `endpoint` of this format's inference route. */
  readonly endpoint: Endpoint;
  /** The path prefix of this format's routes (unknown routes under it answer in this format). */
  readonly pathPrefix: string;
  /** The upstream protocol this format is passed through to unchanged, if any speaks it. */
  readonly passthroughProtocol: Protocol | undefined;
  /** The format reports the prompt's token count at the start of a stream, before any text. */
  readonly inputAtStart: boolean;
  /** A call whose path does not say (`/v1/models`) is this format's if its headers are. */
  claims(headers: Headers): boolean;
  /** A JSON body → the validated request, or a 400 naming the field and the rule. */
  validate(body: Record<string, unknown>): ClientRequest;
  /** The frames that end a stream with an error after its 200 (nothing may follow them). */
  inBandError(message: string): string;
  /** The frame that ends a complete stream. */
  readonly terminalFrame: string;
  /** Does this encoded piece end the stream (the terminal frame or an in-band error)? */
  isTerminal(piece: string): boolean;
  /** What a quiet stream is sent so that proxies and clients keep it open. */
  readonly keepAlive: Uint8Array;
  /** The HTTP status and body of an error in this format's envelope. */
  renderError(err: GatewayError, requestId: string): { status: number; body: unknown };
  /** The request-id headers of every reply: a new object each call (a reply adds its own headers to it). */
  idHeaders(requestId: string): Record<string, string>;
  /** The rate-limit headers this format's clients read. */
  limitHeaders(admission: Admission, nowMs: number): Record<string, string>;
  /**
   * The models list and one model in this format's own shapes, where its clients cannot read the
   * shared one (`GET /v1/models` answers in them when the call's headers claim this format).
   */
  readonly models?: { list(entries: readonly CatalogEntry[]): unknown; one(entry: CatalogEntry): unknown };
}
