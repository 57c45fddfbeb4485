/**
 * What a row of the conformance table is: what a client sends (in both client formats), what must
 * reach the upstream, and the exact result the client must see — whichever upstream protocol
 * serves the model, as JSON and as a stream. `scenarios.ts` lists the rows; `run-cells.ts` runs them.
 *
 * Replies are the simulator's deterministic ones (packages/simulator README): a `text="…"`
 * directive fixes the text; `tools=N` calls the first N tools with generated arguments; `think`
 * adds "Thinking about the request to <model>: <first 8 words>. A deterministic answer follows.".
 */
import { countTextTokens } from "@turnpike/simulator";
import { EPSILON, type TableClient, type Upstream } from "./upstreams";

export interface Cell {
  client: TableClient;
  upstream: Upstream;
  stream: boolean;
}

export interface Expectation {
  /** The exact reply text ("" = no text), or a check of a generated one. */
  text: string | ((text: string) => void);
  thinking?: string;
  toolCalls?: { name: string; args: unknown }[];
  /** What a messages-format client sees. */
  stopReason: string;
  stopSequence?: string | null;
  /** What a chat-completions client sees. */
  finishReason: string;
  /** Params of the `x-turnpike-warning` headers the reply must carry (default: none). */
  warnings?: string[];
  /** The stream is cut: the text it carries before its in-band error, and that error. */
  interrupted?: { text: string; messages: { type: string }; chat: { type: string; code: string | null } };
}

export interface Scenario {
  /** Row label in the README table. */
  title: string;
  upstreams: readonly Upstream[];
  messages(model: string): Record<string, unknown>;
  chat(model: string): Record<string, unknown>;
  /** The Responses request; default: the chat one in the Responses format's fields (`responses-body.ts`). */
  responses?(model: string, upstream: Upstream): Record<string, unknown>;
  expect(cell: Cell): Expectation;
  /** Checks what reached the upstream (the body the simulator received). */
  upstream?(body: Record<string, any>, cell: Cell): void;
}

/** The upstreams a row runs through: its own, and a vendor that speaks the Responses API. */
export function tableUpstreams(s: Scenario): readonly Upstream[] {
  return [...s.upstreams, EPSILON];
}

/** A user turn. */
export const user = (content: unknown) => ({ role: "user", content });
/** A user text whose reply is exactly `text` (plus more directives in `extra`). */
export const say = (text: string, extra = "") => `Say the sentence. [sim text="${text}"${extra}]`;
/** A natural end, in both formats. */
export const plainEnd = { stopReason: "end_turn", finishReason: "stop" } as const;

/** The signature the simulator's messages protocol puts on a thinking block with this text. */
export function simSignature(text: string): string {
  return btoa(`sim-signature:${countTextTokens(text)}`);
}
