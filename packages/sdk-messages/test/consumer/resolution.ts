// Compiled by npm-pack.test.ts under each `moduleResolution` a user may have (classic `node`,
// `node16`, `nodenext`, `bundler`): every entry of the five packages must resolve to its types.
import ChatClient from "@turnpike/chat";
import MessagesClient from "@turnpike/messages";
import { createTurnpikeMock } from "@turnpike/mocks";
import { type ChatRequest, validateChatRequest } from "@turnpike/schema";
import { MESSAGES_ERROR_TYPE_BY_STATUS } from "@turnpike/schema/error-types";
import { RateLimitError } from "@turnpike/sdk-core";
import { SSEDecoderStream } from "@turnpike/schema/sse";

const request: ChatRequest = { model: "beta-5", messages: [{ role: "user", content: "hi" }] };
export const valid: boolean = validateChatRequest(request).ok;
export const decoder: SSEDecoderStream = new SSEDecoderStream();
export const isRateLimit = (e: unknown): boolean => e instanceof RateLimitError;
export const errorTypes: readonly string[] = Object.values(MESSAGES_ERROR_TYPE_BY_STATUS);
export const chat: ChatClient = new ChatClient({ apiKey: "sk-x" });
export const messages: MessagesClient = new MessagesClient({ apiKey: "sk-x" });
export const mock = createTurnpikeMock({ baseURL: "http://localhost:9999" });
// Types that resolved to `any` would accept this: the expected error proves they were read.
// @ts-expect-error a model id is a string
export const wrong: ChatRequest = { model: 5, messages: [] };
