/**
 * Type tests, checked by `tsc --noEmit` (the `typecheck` script and test/types.test.ts): the
 * return type narrows on `stream`, and no `any` leaks into what users touch.
 */
import type MessagesClient from "../src/index.js";
import type {
  APIError,
  MessageStream,
  ModelNotFoundError,
  RateLimitError,
  Stream,
  APIPromise,
  ContentBlock,
  Message,
  Model,
  ModelList,
  RawMessageStreamEvent,
} from "../src/index.js";

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type IsAny<T> = 0 extends 1 & T ? true : false;
declare function expectType<T extends true>(): void;

declare const client: MessagesClient;
declare const flag: boolean;
const params = { model: "alpha-haiku-4-5", max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] };

// `stream` picks the return type.
const json = client.messages.create(params);
expectType<Equals<typeof json, APIPromise<Message>>>();
const explicitFalse = client.messages.create({ ...params, stream: false });
expectType<Equals<typeof explicitFalse, APIPromise<Message>>>();
const streamed = client.messages.create({ ...params, stream: true });
expectType<Equals<typeof streamed, APIPromise<Stream<RawMessageStreamEvent>>>>();
const either = client.messages.create({ ...params, stream: flag });
expectType<Equals<typeof either, APIPromise<Stream<RawMessageStreamEvent> | Message>>>();

// Awaiting gives the parsed types; the stream yields the union of events, discriminated on type.
async function usage(): Promise<void> {
  const message = await json;
  expectType<Equals<typeof message.content, ContentBlock[]>>();
  expectType<Equals<IsAny<typeof message>, false>>();
  for await (const event of await streamed) {
    expectType<Equals<typeof event, RawMessageStreamEvent>>();
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
      expectType<Equals<typeof event.delta.text, string>>();
    }
  }
  const { data, requestId } = await json.withResponse();
  expectType<Equals<typeof data, Message>>();
  expectType<Equals<typeof requestId, string | undefined>>();
}

// The helper.
const helper = client.messages.stream(params);
expectType<Equals<typeof helper, MessageStream>>();
expectType<Equals<ReturnType<typeof helper.finalMessage>, Promise<Message>>>();
expectType<Equals<ReturnType<typeof helper.finalText>, Promise<string>>>();
helper.on("text", (delta, snapshot) => {
  expectType<Equals<typeof delta, string>>();
  expectType<Equals<typeof snapshot, string>>();
});
helper.on("finalMessage", (message) => expectType<Equals<typeof message, Message>>());
helper.on("error", (error) => expectType<Equals<typeof error, Error>>());
// @ts-expect-error: not an event of the helper
helper.on("chunk", () => undefined);

// Models and count_tokens.
expectType<Equals<Awaited<ReturnType<typeof client.models.list>>, ModelList>>();
expectType<Equals<Awaited<ReturnType<typeof client.models.retrieve>>, Model>>();
expectType<Equals<Awaited<ReturnType<typeof client.models.validate>>, Model>>();
expectType<Equals<Awaited<ReturnType<typeof client.messages.countTokens>>, { input_tokens: number }>>();
async function iterateModels(): Promise<void> {
  for await (const model of client.models.list()) expectType<Equals<typeof model, Model>>();
}

// Errors carry typed fields, never `any`.
declare const err: APIError;
expectType<Equals<typeof err.requestId, string | undefined>>();
expectType<Equals<typeof err.status, number | undefined>>();
expectType<Equals<IsAny<typeof err.error>, false>>();
declare const limited: RateLimitError;
expectType<Equals<typeof limited.retryAfterMs, number | undefined>>();
declare const missing: ModelNotFoundError;
expectType<Equals<typeof missing.availableModels, string[] | undefined>>();

// The request type is checked.
// @ts-expect-error: max_tokens is required in the messages format
client.messages.create({ model: "m", messages: [] });
// @ts-expect-error: the gateway-internal `turnpike` field is not part of the public request
client.messages.create({ ...params, turnpike: {} });
// @ts-expect-error: roles are user, assistant and (mid-conversation) system
client.messages.create({ ...params, messages: [{ role: "tool", content: "x" }] });
// Mid-conversation system messages are part of the request type.
client.messages.create({
  ...params,
  messages: [
    { role: "user", content: "Hi" },
    { role: "system", content: "Skills: review" },
  ],
});

void usage;
void iterateModels;
