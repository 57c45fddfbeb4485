/** Type tests for the mock's public surface, checked by `tsc --noEmit`. */
import type { HttpHandler } from "msw";
import { createTurnpikeMock, type CapturedRequest, type MockReply } from "../src/index.js";
import type { ChatRequest, MessagesRequest, ResponsesRequest, ResponsesResponse } from "@turnpike/schema";

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type IsAny<T> = 0 extends 1 & T ? true : false;
declare function expectType<T extends true>(): void;

const turnpike = createTurnpikeMock({ baseURL: "http://localhost:8080", apiKey: "sk-test" });
expectType<Equals<typeof turnpike.handlers, HttpHandler[]>>();
expectType<Equals<ReturnType<typeof turnpike.bodies<"messages">>, MessagesRequest[]>>();
expectType<Equals<ReturnType<typeof turnpike.bodies<"chat">>, ChatRequest[]>>();
expectType<Equals<ReturnType<typeof turnpike.bodies<"responses">>, ResponsesRequest[]>>();
expectType<Equals<ReturnType<typeof turnpike.bodies<"input_tokens">>, ResponsesRequest[]>>();
expectType<Equals<typeof turnpike.storedResponses, ReadonlyMap<string, ResponsesResponse>>>();
turnpike.fail(404, {}, { endpoint: ["responses", "response", "input_tokens"] });
expectType<Equals<ReturnType<typeof turnpike.lastRequest>, CapturedRequest | undefined>>();
expectType<Equals<IsAny<CapturedRequest["body"]>, false>>();

turnpike
  .reply({ text: "hi" })
  .fail(429, { retryAfter: 1 })
  .reply((req) => ({ text: req.model ?? "" }), { endpoint: "chat", times: 2 });
const reply: MockReply = { toolCalls: [{ name: "f", input: { a: 1 } }], stopReason: "tool_use" };
turnpike.replyAlways(reply);
// @ts-expect-error: not a stop reason of the messages format
turnpike.reply({ stopReason: "stop" });
// @ts-expect-error: an unknown endpoint
turnpike.reply({}, { endpoint: "completions" });
turnpike.fail(400, {}, { endpoint: "embeddings" });
