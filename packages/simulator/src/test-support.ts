/** Helpers for the simulator's own tests (not exported by the package). */
import { SSEDecoderStream, type SSEMessage } from "@turnpike/schema/sse";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createSimulatorFetch, type SimulatorFetch } from "./create-simulator-fetch";
import type { SimulatorOptions } from "./simulator-options";

/** Token count computed straight from gpt-tokenizer, independently of the simulator's wrapper. */
export const tok = (s: string): number => (s ? countTokens(s, { disallowedSpecial: new Set() }) : 0);

export const AUTH = {
  messages: { "x-api-key": "test-key" },
  chat: { authorization: "Bearer test-key" },
  generate: { "x-goog-api-key": "test-key" },
} as const;

export const PATH = {
  messages: "/v1/messages",
  chat: "/v1/chat/completions",
  generate: (model: string, verb = "generateContent") => `/v1beta/models/${model}:${verb}`,
} as const;

export interface Sim {
  fetch: SimulatorFetch;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

export function sim(opts: SimulatorOptions = {}): Sim {
  const fetch = createSimulatorFetch(opts);
  return {
    fetch,
    post: (path, body, headers = {}) =>
      fetch(`http://sim${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
  };
}

/** Decodes an SSE body with the repo's one decoder. */
export async function events(res: Response): Promise<SSEMessage[]> {
  const out: SSEMessage[] = [];
  const reader = res.body!.pipeThrough(new SSEDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

/** Data payloads of an SSE body, parsed (except `[DONE]`, kept as the string). */
export async function payloads(res: Response): Promise<any[]> {
  return (await events(res)).map((e) => (e.data === "[DONE]" ? e.data : JSON.parse(e.data)));
}

/** The default reply text for `quote` from `model` with the default 20-word minimum. */
export function defaultReply(model: string, quote: string): string {
  const filler =
    "and the simulator keeps talking in plain deterministic words so that every stream has enough pieces for a test to count while the gateway relays them one by one".split(
      " ",
    );
  const head = `Simulated reply from ${model} to: ${quote}`;
  const words = head.split(" ").length;
  return [head, ...filler.slice(0, Math.max(0, 20 - words))].join(" ") + ".";
}
