import type { Fault } from "./faults";

/** Options shared by {@link startSimulator} and {@link createSimulatorFetch}. */
export interface SimulatorOptions {
  /** Port to listen on; 0 (the default) picks a free one. Ignored by `createSimulatorFetch`. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. Ignored by `createSimulatorFetch`. */
  hostname?: string;
  /** Delay between stream chunks, in ms. Default 0: every chunk is written at once, no timers. */
  latencyMs?: number;
  /** Delay before the response (status line included), in ms. Default 0. */
  firstByteMs?: number;
  /** Number of text pieces a default reply is split into. Default 12. */
  chunks?: number;
  /** Fixed reply text instead of the generated sentence (the `text` directive still wins). */
  text?: string;
  /** Largest request body answered, in bytes; larger is a 400 in the protocol's format. Default 1 MiB. */
  maxBodyBytes?: number;
  /** How many recent requests `requests` keeps. Default 100; 0 turns capturing off. */
  captureLimit?: number;
  /**
   * The model name replies carry, from the one asked for: real vendors answer with their own
   * dated snapshot names (`…-20250929`, `…-2025-04-14`, `…-001`). Default: the name asked for.
   */
  answerModel?: (requested: string) => string;
  /**
   * How long a batch of the vendors' batch APIs (`/v1/batches`, `/v1/messages/batches`) runs
   * before it ends, in ms. Default 0: it has ended by the first poll. `POST /_sim/batches` changes it.
   */
  batchMs?: number;
}

/** One request as the simulator received it, for tests to assert what the gateway sent. */
export interface CapturedRequest {
  method: string;
  /** Path and query, e.g. `/v1beta/models/gamma-3-pro:streamGenerateContent?alt=sse`. */
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when there is none. */
  body: unknown;
}

export interface Simulator {
  /** Origin, e.g. `http://127.0.0.1:4010` (no trailing slash). */
  url: string;
  port: number;
  stop(): Promise<void>;
  /** The last `captureLimit` requests, oldest first. */
  requests: CapturedRequest[];
  /** Makes trouble for requests carrying this credential (as `POST /_sim/faults` does). */
  fault(key: string, fault: Fault): void;
  /** Clears every fault (as `DELETE /_sim/faults` does). */
  clearFaults(): void;
}

/** The protocols it serves: one type for the whole repository, defined in `@turnpike/schema`. */
export type { Protocol } from "@turnpike/schema";
