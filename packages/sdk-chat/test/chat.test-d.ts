/**
 * Type tests, checked by `tsc --noEmit` (the `typecheck` script and test/types.test.ts): the
 * return type narrows on `stream`, and no `any` leaks into what users touch.
 */
import type ChatClient from "../src/index.js";
import type {
  APIError,
  ChatCompletionStream,
  RateLimitError,
  Stream,
  APIPromise,
  ChatCompletion,
  ChatCompletionChunk,
  ChatResponseMessage,
  Model,
  ModelList,
} from "../src/index.js";

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type IsAny<T> = 0 extends 1 & T ? true : false;
declare function expectType<T extends true>(): void;

declare const client: ChatClient;
declare const flag: boolean;
const params = { model: "beta-5", messages: [{ role: "user" as const, content: "Hi" }] };

// `stream` picks the return type.
const json = client.chat.completions.create(params);
expectType<Equals<typeof json, APIPromise<ChatCompletion>>>();
const explicitNull = client.chat.completions.create({ ...params, stream: null });
expectType<Equals<typeof explicitNull, APIPromise<ChatCompletion>>>();
const streamed = client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
expectType<Equals<typeof streamed, APIPromise<Stream<ChatCompletionChunk>>>>();
const either = client.chat.completions.create({ ...params, stream: flag });
expectType<Equals<typeof either, APIPromise<Stream<ChatCompletionChunk> | ChatCompletion>>>();

async function usage(): Promise<void> {
  const completion = await json;
  expectType<Equals<(typeof completion.choices)[number]["message"]["content"], string | null>>();
  expectType<Equals<IsAny<typeof completion>, false>>();
  for await (const chunk of await streamed) {
    expectType<Equals<typeof chunk, ChatCompletionChunk>>();
    expectType<Equals<IsAny<(typeof chunk.choices)[number]["delta"]>, false>>();
  }
}

// The helper.
const helper = client.chat.completions.stream(params);
expectType<Equals<typeof helper, ChatCompletionStream>>();
expectType<Equals<ReturnType<typeof helper.finalChatCompletion>, Promise<ChatCompletion>>>();
expectType<Equals<ReturnType<typeof helper.finalMessage>, Promise<ChatResponseMessage>>>();
expectType<Equals<ReturnType<typeof helper.finalContent>, Promise<string | null>>>();
helper.on("content", (delta, snapshot) => {
  expectType<Equals<typeof delta, string>>();
  expectType<Equals<typeof snapshot, string>>();
});
helper.on("chunk", (chunk) => expectType<Equals<typeof chunk, ChatCompletionChunk>>());
// @ts-expect-error: not an event of the helper
helper.on("text", () => undefined);
async function text(): Promise<void> {
  for await (const piece of helper.textStream) expectType<Equals<typeof piece, string>>();
}

// Models.
expectType<Equals<Awaited<ReturnType<typeof client.models.list>>, ModelList>>();
expectType<Equals<Awaited<ReturnType<typeof client.models.retrieve>>, Model>>();

// Errors.
declare const err: APIError;
expectType<Equals<typeof err.code, string | undefined>>();
expectType<Equals<typeof err.requestId, string | undefined>>();
declare const limited: RateLimitError;
expectType<Equals<typeof limited.rateLimit.remainingTokens, number | undefined>>();

// The request type is checked.
// @ts-expect-error: messages is required
client.chat.completions.create({ model: "m" });
// @ts-expect-error: temperature is a number
client.chat.completions.create({ ...params, temperature: "hot" });

void usage;
void text;
