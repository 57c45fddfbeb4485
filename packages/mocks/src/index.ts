/**
 * `@turnpike/mocks`: msw 2 handlers that stand in for a Turnpike gateway, so apps built on
 * `@turnpike/messages` or `@turnpike/chat` (or any client of the messages, chat-completions or
 * Responses format) test offline.
 *
 * @example
 * ```ts
 * import { setupServer } from "msw/node";
 * import { createTurnpikeMock } from "@turnpike/mocks";
 *
 * const turnpike = createTurnpikeMock({ baseURL: "http://localhost:8080" });
 * const server = setupServer(...turnpike.handlers);
 * server.listen({ onUnhandledRequest: "error" });
 * turnpike.reply({ text: "Hi!" }).fail(429, { retryAfter: 1 });
 * ```
 */
export {
  createTurnpikeMock,
  type ReplyOptions,
  type ScriptedReply,
  type TurnpikeMock,
  type TurnpikeMockOptions,
} from "./create-turnpike-mock.js";
export type { CapturedRequest, MockEndpoint, MockRequestBodies } from "./captured-request.js";
export { DEFAULT_MODEL_IDS, mockModel } from "./default-models.js";
export { mockVector } from "./render-embeddings.js";
export {
  type MockCut,
  type MockError,
  type MockReply,
  type MockToolCall,
  STREAM_FAILED_MESSAGE,
} from "./mock-reply.js";
