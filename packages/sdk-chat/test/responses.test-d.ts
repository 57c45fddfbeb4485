/**
 * Type tests of `client.responses`, checked by `tsc --noEmit` (the `typecheck` script): the
 * return type narrows on `stream`, listeners get the event of their name, and no `any` leaks.
 */
import type ChatClient from "../src/index.js";
import type {
  APIPromise,
  PagePromise,
  ResponseItem,
  ResponseItemList,
  ResponseObject,
  ResponseStream,
  ResponseStreamEvent,
  ResponsesDeleted,
  ResponsesInputTokens,
  ResponsesResponse,
  Stream,
} from "../src/index.js";

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type IsAny<T> = 0 extends 1 & T ? true : false;
declare function expectType<T extends true>(): void;

declare const client: ChatClient;
declare const flag: boolean;
const params = { model: "beta-5", input: "Hi" };

// `stream` picks the return type.
const json = client.responses.create(params);
expectType<Equals<typeof json, APIPromise<ResponseObject>>>();
expectType<Equals<ReturnType<typeof client.responses.retrieve>, APIPromise<ResponseObject>>>();
const streamed = client.responses.create({ ...params, stream: true });
expectType<Equals<typeof streamed, APIPromise<Stream<ResponseStreamEvent>>>>();
const either = client.responses.create({ ...params, stream: flag });
expectType<Equals<typeof either, APIPromise<Stream<ResponseStreamEvent> | ResponseObject>>>();

async function usage(): Promise<void> {
  const response = await json;
  expectType<Equals<typeof response.output_text, string>>();
  expectType<Equals<IsAny<typeof response>, false>>();
  const wire: ResponsesResponse = response;
  void wire;
  for await (const event of await streamed) {
    expectType<Equals<IsAny<typeof event>, false>>();
    if (event.type === "response.output_text.delta") expectType<Equals<typeof event.delta, string>>();
    if (event.type === "response.completed") expectType<Equals<typeof event.response, ResponsesResponse>>();
  }
}

// The helper.
const helper = client.responses.stream(params);
expectType<Equals<typeof helper, ResponseStream>>();
expectType<Equals<ReturnType<typeof helper.finalResponse>, Promise<ResponseObject>>>();
helper.on("response.output_text.delta", (event, snapshot) => {
  expectType<Equals<typeof event.delta, string>>();
  expectType<Equals<typeof event.content_index, number>>();
  expectType<Equals<typeof snapshot, ResponsesResponse>>();
});
helper.on("response.function_call_arguments.done", (event) => expectType<Equals<typeof event.arguments, string>>());
helper.on("finalResponse", (response) => expectType<Equals<typeof response, ResponseObject>>());
helper.on("error", (err) => expectType<Equals<typeof err, Error>>());
// @ts-expect-error: not an event of the helper
helper.on("response.text.delta", () => undefined);
async function text(): Promise<void> {
  for await (const piece of helper.textStream) expectType<Equals<typeof piece, string>>();
}

// Stored responses and counts.
expectType<Equals<ReturnType<typeof client.responses.delete>, APIPromise<ResponsesDeleted>>>();
expectType<Equals<ReturnType<typeof client.responses.inputItems.list>, PagePromise<ResponseItem, ResponseItemList>>>();
expectType<Equals<ReturnType<typeof client.responses.inputTokens.count>, APIPromise<ResponsesInputTokens>>>();
// @ts-expect-error: order is "asc" or "desc"
client.responses.inputItems.list("resp_1", { order: "newest" });

// The request type is checked.
// @ts-expect-error: input is required
client.responses.create({ model: "m" });
// @ts-expect-error: temperature is a number
client.responses.create({ ...params, temperature: "hot" });
// @ts-expect-error: every tool names its type
client.responses.create({ ...params, tools: [{ function: { name: "f" } }] });

void usage;
void text;
