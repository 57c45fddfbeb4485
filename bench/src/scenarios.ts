/**
 * What the benchmark sends. Each gateway scenario is paired with a baseline: the same-protocol
 * request the upstream receives for it, which the bare proxy and the direct run send to the
 * simulator. For passthrough scenarios that is the client's own request; for translation
 * scenarios it is the request in the upstream's protocol (e.g. chat→messages is paired with the
 * messages baseline). Every reply is the same simulator reply in all three runs.
 */
import type { WrkRequest } from "./wrk-script";

/** The key the simulator accepts (any non-empty key) — also set as the gateway's vendor keys. */
export const UPSTREAM_KEY = "sk-bench-upstream";

const PROMPT = [{ role: "user", content: "hi" }];

/** A request of one shape, sent to a path of some origin. */
export interface HttpRequestSpec extends WrkRequest {
  /** Path and query, e.g. `/v1/messages`. */
  path: string;
  stream: boolean;
}

/** Same-protocol upstream requests (alpha = messages, beta = chat, gamma = generateContent). */
export type BaselineName = "messages" | "chat" | "generate" | "messages-stream" | "chat-stream" | "chat-1k";

const json = (o: unknown) => JSON.stringify(o);
const messagesHeaders = {
  "content-type": "application/json",
  "x-api-key": UPSTREAM_KEY,
  "anthropic-version": "2023-06-01",
};
const chatHeaders = { "content-type": "application/json", authorization: `Bearer ${UPSTREAM_KEY}` };
const generateHeaders = { "content-type": "application/json", "x-goog-api-key": UPSTREAM_KEY };

/**
 * The request shape of agentgateway's published benchmark ("Benchmarking agentgateway vs
 * LiteLLM", parts 1 and 2, 2026-06-26: 32 connections, 1 KB request payloads, a mock LLM
 * server), as issue 47 sets it: a 1 KiB messages request translated to chat, the upstream
 * answering its head after {@link PUBLISHED_FIRST_BYTE_MS} (the simulator's `first_byte`
 * directive, so the same simulator serves every scenario). The posts' mock answers at once;
 * the issue's 25 ms stands for a vendor's time to answer.
 */
export const PUBLISHED_FIRST_BYTE_MS = 25;
export const PUBLISHED_BODY_BYTES = 1024;

/** `body(text)` padded with spaces in its one user turn until it is exactly `bytes` long. */
function padded(body: (text: string) => string, bytes: number): string {
  const head = `[sim first_byte=${PUBLISHED_FIRST_BYTE_MS}] `;
  const short = body(head);
  if (short.length > bytes) throw new Error(`the published shape's body is over ${bytes} bytes already`);
  // The pad is words, as a prompt's are (not one run of a single letter).
  const words = "the quick brown fox jumps over the lazy dog ".repeat(40);
  return body(head + words.slice(0, bytes - short.length));
}
const PUBLISHED_MESSAGES = padded(
  (t) => json({ model: "beta-5", max_tokens: 64, messages: [{ role: "user", content: t }] }),
  PUBLISHED_BODY_BYTES,
);
const PUBLISHED_CHAT = padded(
  (t) => json({ model: "beta-5", max_tokens: 64, messages: [{ role: "user", content: t }] }),
  PUBLISHED_BODY_BYTES,
);

export const BASELINES: Record<BaselineName, HttpRequestSpec> = {
  messages: {
    method: "POST",
    path: "/v1/messages",
    headers: messagesHeaders,
    body: json({ model: "alpha-haiku-4-5", max_tokens: 64, messages: PROMPT }),
    stream: false,
  },
  chat: {
    method: "POST",
    path: "/v1/chat/completions",
    headers: chatHeaders,
    body: json({ model: "beta-5", max_tokens: 64, messages: PROMPT }),
    stream: false,
  },
  generate: {
    method: "POST",
    path: "/v1beta/models/gamma-3-flash:generateContent",
    headers: generateHeaders,
    body: json({ contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 64 } }),
    stream: false,
  },
  "messages-stream": {
    method: "POST",
    path: "/v1/messages",
    headers: messagesHeaders,
    body: json({ model: "alpha-haiku-4-5", max_tokens: 64, stream: true, messages: PROMPT }),
    stream: true,
  },
  // The gateway always asks a chat upstream for the usage chunk (docs/protocols.md §4.1).
  "chat-stream": {
    method: "POST",
    path: "/v1/chat/completions",
    headers: chatHeaders,
    body: json({
      model: "beta-5",
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      messages: PROMPT,
    }),
    stream: true,
  },
  // The upstream's side of the published shape: the same 1 KiB turn in the chat format.
  "chat-1k": {
    method: "POST",
    path: "/v1/chat/completions",
    headers: chatHeaders,
    body: PUBLISHED_CHAT,
    stream: false,
  },
};

export type ScenarioKind = "passthrough" | "translation";
export type ClientFormat = "messages" | "chat" | "responses";

export interface Scenario {
  name: string;
  kind: ScenarioKind;
  /** The gateway request (its key header is added at run time). */
  gateway: { format: ClientFormat; path: string; body: string };
  baseline: BaselineName;
  stream: boolean;
  /** The concurrencies it is loaded at (default: the run's, 1, 32 and 128). */
  concurrencies?: readonly number[];
  /** A published benchmark whose request shape this is: reported beside it, not judged against the passthroughs. */
  published?: string;
}

const PATH: Record<ClientFormat, string> = {
  messages: "/v1/messages",
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
};

/**
 * The same prompt in each client format. A Responses request says `store: false`, as the coding
 * agents that speak it do: a stored reply is a write of its own, not part of the translation.
 */
const BODY: Record<ClientFormat, (model: string, stream: boolean) => string> = {
  messages: (model, stream) => json({ model, max_tokens: 64, ...(stream ? { stream: true } : {}), messages: PROMPT }),
  chat: (model, stream) => json({ model, max_tokens: 64, ...(stream ? { stream: true } : {}), messages: PROMPT }),
  responses: (model, stream) =>
    json({ model, max_output_tokens: 64, store: false, ...(stream ? { stream: true } : {}), input: "hi" }),
};

function scenario(
  name: string,
  kind: ScenarioKind,
  format: ClientFormat,
  model: string,
  baseline: BaselineName,
): Scenario {
  const stream = BASELINES[baseline].stream;
  return { name, kind, gateway: { format, path: PATH[format], body: BODY[format](model, stream) }, baseline, stream };
}

export const SCENARIOS: Scenario[] = [
  scenario("messages passthrough", "passthrough", "messages", "alpha-haiku-4-5", "messages"),
  scenario("chat passthrough", "passthrough", "chat", "beta-5", "chat"),
  scenario("messages→chat", "translation", "messages", "beta-5", "chat"),
  scenario("chat→messages", "translation", "chat", "alpha-haiku-4-5", "messages"),
  scenario("messages→generateContent", "translation", "messages", "gamma-3-flash", "generate"),
  scenario("stream messages passthrough", "passthrough", "messages", "alpha-haiku-4-5", "messages-stream"),
  scenario("stream chat passthrough", "passthrough", "chat", "beta-5", "chat-stream"),
  scenario("stream messages→chat", "translation", "messages", "beta-5", "chat-stream"),
  scenario("stream chat→messages", "translation", "chat", "alpha-haiku-4-5", "messages-stream"),
  scenario("responses→chat", "translation", "responses", "beta-5", "chat"),
  scenario("stream responses→chat", "translation", "responses", "beta-5", "chat-stream"),
  {
    name: "agentgateway shape: messages→chat 1 KiB",
    kind: "translation",
    gateway: { format: "messages", path: PATH.messages, body: PUBLISHED_MESSAGES },
    baseline: "chat-1k",
    stream: false,
    concurrencies: [32],
    published: `agentgateway's benchmark (c=32, 1 KiB requests), the upstream answering after ${PUBLISHED_FIRST_BYTE_MS} ms`,
  },
];

/** The gateway request of a scenario, carrying the Turnpike key the way each format's clients do. */
export function gatewayRequest(s: Scenario, key: string): HttpRequestSpec {
  const headers: Record<string, string> =
    s.gateway.format === "messages"
      ? { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" }
      : { "content-type": "application/json", authorization: `Bearer ${key}` };
  return { method: "POST", path: s.gateway.path, headers, body: s.gateway.body, stream: s.stream };
}
