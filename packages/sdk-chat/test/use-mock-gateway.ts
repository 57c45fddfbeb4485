/**
 * Test setup: an msw server with `@turnpike/mocks` handlers for a fake gateway origin, reset
 * after each test, and a client pointed at it.
 */
import { afterAll, afterEach, beforeAll } from "bun:test";
import { createTurnpikeMock, type TurnpikeMock } from "@turnpike/mocks";
import { setupServer, type SetupServer } from "msw/node";
import { ChatClient, type ChatClientOptions } from "../src/index.js";

export const BASE = "http://gateway.test";
export const KEY = "sk-test-chat";

export function useMockGateway(): {
  turnpike: TurnpikeMock;
  server: SetupServer;
  client: (options?: ChatClientOptions) => ChatClient;
} {
  const turnpike = createTurnpikeMock({ baseURL: BASE, apiKey: KEY });
  const server = setupServer(...turnpike.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterEach(() => {
    server.resetHandlers();
    turnpike.reset();
  });
  afterAll(() => server.close());
  return { turnpike, server, client: (options = {}) => new ChatClient({ apiKey: KEY, baseURL: BASE, ...options }) };
}

/** A conversation of one user turn. */
export const hello = { model: "beta-5", messages: [{ role: "user" as const, content: "Hello" }] };
