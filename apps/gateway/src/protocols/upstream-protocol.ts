import type { GatewayError, Warning } from "@turnpike/providers";
import type { MessagesRequest, MessagesResponse, MessagesStreamEvent, Protocol } from "@turnpike/schema";
import type { SSEMessage } from "@turnpike/schema/sse";
import type { AuthScheme, Target } from "../vocabulary/target";
import type { UsageSink } from "../vocabulary/usage-sink";
import type { SignatureStore } from "../vocabulary/signature-store";
import type { ServiceTier } from "../vocabulary/target";
import type { UpstreamBatchApi } from "./vendor-batch";

export type { Target } from "../vocabulary/target";

/** An upstream HTTP request, ready to send. */
export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The pivot request in this protocol's terms. */
export interface ProtocolBody {
  body: Record<string, unknown>;
  warnings: Warning[];
  /** Upstream tool names that had to change → the client's names (mapped back in replies). */
  toolNames: Record<string, string> | undefined;
}

/** What a reply or stream translator needs to know of its request. */
export interface ReplyContext {
  /** The catalog id the client asked for (the reply's `model`). */
  model: string;
  stopSequences: readonly string[] | undefined;
  toolNames: Record<string, string> | undefined;
  signatures: SignatureStore;
  /** The prompt's token count known before the first byte (a stream's `message_start`). */
  inputTokens: number;
}

/** A state machine over one upstream stream: decoded SSE in, pivot events out. */
export interface StreamMachine {
  push(msg: SSEMessage): void;
  end(): void;
}

/** Which frames a same-protocol stream has seen (the passthrough tap completes or flags the end). */
export interface PassthroughState {
  /** The upstream said how the reply ended (messages: `message_delta`; chat: a `finish_reason`). */
  finished: boolean;
  /** The stream's own terminal frame went by. */
  terminated: boolean;
  /** The whole reply, where the terminal frame carries it (a Responses stream's last event). */
  reply?: Record<string, unknown>;
}

export interface PassthroughOptions {
  /** The client asked for usage inside the stream. */
  includeUsage: boolean;
  /**
   * The catalog id every frame must name (the vendor may answer with its own snapshot name; the
   * tap puts it right as text, see `model-label.ts`); undefined leaves the frames as they are.
   */
  renameModel: string | undefined;
}

/**
 * How a same-protocol stream is read while its bytes pass through: the few frames that matter
 * (usage, finish, terminator) found by a scan of the raw text, or read from parsed events when the
 * stream is not in the plain shape or an event must be changed.
 */
export interface PassthroughReader {
  /** The field each frame and reply names its model in (`model` unless said). */
  readonly modelKey?: string;
  /** Events can be relayed as the raw upstream bytes (nothing in them must change). */
  raw(opts: PassthroughOptions): boolean;
  /** Scans complete frames of plain LF-framed SSE for usage, finish and terminator. */
  scan(region: string, sink: UsageSink, state: PassthroughState): void;
  /**
   * What {@link scan} looks for, as text: it finds nothing in a frame that holds none of these.
   * With them, a raw region of plain frames is searched as bytes and only the frames that hold
   * one (or a usage) are decoded and scanned; the rest go through, and are kept, as bytes.
   */
  readonly markers?: readonly string[];
  /**
   * Where the stream cannot go as raw bytes ({@link raw} false), a plain region as it must be
   * relayed (a frame taken out or changed), so that the scanner keeps the stream instead of the
   * full parser; undefined when this region needs the parser after all.
   */
  trim?(region: string, opts: PassthroughOptions): string | undefined;
  /** Reads one parsed event; returns what to relay (changed if it must be), or nothing. */
  inspect(msg: SSEMessage, sink: UsageSink, opts: PassthroughOptions, state: PassthroughState): SSEMessage | undefined;
  /**
   * The relayed text of one parsed event's data (`{…}`), or of a raw region of frames: read only
   * to count it, when the upstream never reported its usage.
   */
  text(dataOrRegion: string): string;
  /**
   * The relayed text of a plain raw region (what `text` gives), found by search without parsing
   * the region, or undefined where it cannot be read that way: lets a flowing stream keep the
   * text it relayed instead of the frames (a frame is many times its text).
   */
  quickText?(region: string): string | undefined;
}

/**
 * How a passthrough stream of this protocol is read back after a cut (relay/continuing-tap.ts):
 * its relayed bytes go through {@link UpstreamProtocol.machine} into pivot events, which the
 * client format's encoder takes as what it has written.
 */
export interface ReadBack {
  /** Where the vendor's in-band error frame starts, as its text: a relayed piece holding one ends this upstream's part there. */
  readonly errorMarks: readonly string[];
  /** A read-back pivot event put in the terms of the same format's encoder (where its machine names things otherwise). */
  fix?(ev: MessagesStreamEvent): void;
}

/**
 * What an embeddings call reads of its request (the checked `POST /v1/embeddings` body,
 * embeddings/embeddings-request.ts): the inputs (a text, or token ids), and the options a
 * protocol may carry.
 */
export interface EmbeddingsInput {
  inputs: readonly (string | number[])[];
  dimensions: number | undefined;
  user: string | undefined;
  /** What the vectors are for (the generateContent protocol's `taskType`). */
  taskType: string | undefined;
}

/** What an upstream answered, in Turnpike's terms: one vector per input, in input order. */
export interface EmbeddingsReply {
  vectors: number[][];
  /** The input tokens the upstream reported; undefined when its protocol reports none. */
  inputTokens: number | undefined;
}

/** The embeddings call of one upstream protocol: the request to send, and how to read the reply. */
export interface EmbeddingsCall {
  /** Throws a 400 for an input the protocol cannot take. */
  request(target: Target, req: EmbeddingsInput): UpstreamRequest;
  /** The reply's vectors, or undefined when the reply is not in the protocol's shape. */
  read(json: unknown, inputs: number): EmbeddingsReply | undefined;
}
/** A JSON array of numbers (a vector as a reply holds it). */
export const isNumbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number");

/**
 * Everything Turnpike does with one upstream protocol, in one place (decisions/, "one folder per
 * upstream protocol"): inference, token counting, embeddings and the vendor's batch API. The
 * registry (`protocols/index.ts`) is a `Record<Protocol, UpstreamProtocol>`, so a new protocol is
 * one folder and one line, and the compiler proves it covers every concern; no code outside
 * `protocols/` branches on a protocol's name (test/protocol-branches.test.ts).
 */
/** How a continuation hands an upstream the reply it must go on with (see `continueBy`). */
export type ContinueBy = "prefill" | "ask";

export interface UpstreamProtocol {
  readonly id: Protocol;
  /** How a vendor's key is sent unless its row says otherwise. */
  readonly auth: AuthScheme;
  /** The built-in simulator's base URL for this protocol, in the vendor client's convention. */
  simulatorBase(simulatorURL: string): string;
  /** The stream reports the prompt's input tokens in its first event. */
  readonly inputAtStart: boolean;
  /** The pivot request in this protocol (async: signatures may have to be looked up). */
  fromPivot(pivot: MessagesRequest, target: Target, signatures: SignatureStore): Promise<ProtocolBody>;
  /** The HTTP request of one call (async, so that a signing scheme fits). */
  buildRequest(
    target: Target,
    body: Record<string, unknown>,
    opts: { stream: boolean; clientHeaders: Headers },
  ): Promise<UpstreamRequest>;
  /** A stream translator to pivot events. */
  machine(ctx: ReplyContext, emit: (ev: MessagesStreamEvent) => void): StreamMachine;
  /** A JSON reply as the pivot reply (read leniently: only the fields used). */
  reply(json: unknown, ctx: ReplyContext): MessagesResponse;
  /** An error reply as a GatewayError. */
  parseError(status: number, text: string, headers: Headers): GatewayError;
  /** The vendor's own count of a prompt given as this protocol's request body, where it has one. */
  count:
    | ((target: Target, body: Record<string, unknown>, clientHeaders: Headers) => Promise<UpstreamRequest>)
    | undefined;
  /** Reads the count call's reply. */
  readCount(json: unknown): number | undefined;
  /** Prepares a same-protocol body for passthrough (asks for what metering needs). */
  preparePassthrough(body: Record<string, unknown>, stream: boolean): void;
  /** The usage of a JSON reply in this protocol. */
  replyUsage(json: Record<string, unknown>): UsageTotalsPartial;
  /** The vendor's own name of the model that wrote a JSON reply (often a dated snapshot name). */
  replyModel(json: Record<string, unknown>): string | undefined;
  /** The same, from one stream event's data, read as text (undefined until an event names it). */
  streamModel(data: string): string | undefined;
  readonly passthrough: PassthroughReader;
  /** The embeddings call, where the protocol has one (`embedding_dimensions` rows need it). */
  readonly embeddings: EmbeddingsCall | undefined;
  /** The vendor's own batch API, where the protocol has one; else batch lines run in Turnpike's queue. */
  readonly batches: UpstreamBatchApi | undefined;
  /**
   * The client's beta headers (`CLIENT_BETA_HEADERS`: only messages upstreams read them) are sent
   * on as they came; toward the other protocols they are dropped with a warning.
   */
  readonly readsClientBetas: boolean;
  /**
   * How a cut reply is first asked to go on (dispatch/continuation-request.ts): `prefill`, the
   * partial reply as the last, assistant turn, where the protocol has one; else `ask`, the
   * partial turn and a user turn asking to continue.
   */
  readonly continueBy: ContinueBy;
  /** How a passthrough stream of this protocol is continued after a cut; undefined: it is not. */
  readonly readBack: ReadBack | undefined;
  /**
   * Asks the upstream for a paid service tier in its own field of `body` (docs/protocols.md
   * §5.5a); false where the protocol cannot ask for this tier.
   */
  serviceTier(body: Record<string, unknown>, tier: ServiceTier): boolean;
  /** The request parameters Turnpike carries to this protocol, in the OpenRouter vocabulary (`GET /v1/models`). */
  readonly parameters: readonly string[];
}

/** Usage fields a reader found (absent = not reported). */
export type UsageTotalsPartial = Parameters<UsageSink["report"]>[0];

/** The header that carries a vendor key under each scheme. */
export function authHeaders(scheme: AuthScheme, key: string): Record<string, string> {
  switch (scheme) {
    case "x-api-key":
      return { "x-api-key": key };
    case "bearer":
      return { authorization: `Bearer ${key}` };
    case "x-goog-api-key":
      return { "x-goog-api-key": key };
    default: {
      const never: never = scheme;
      throw new Error(`unknown auth scheme ${String(never)}`);
    }
  }
}

/** Sets a field, leaving a body that has it already as it is (a passthrough keeps its bytes). */
export function putField(body: Record<string, unknown>, field: string, value: string): true {
  if (body[field] !== value) body[field] = value;
  return true;
}

export function trimSlash(s: string): string {
  return s.endsWith("/") ? s.slice(0, -1) : s;
}
