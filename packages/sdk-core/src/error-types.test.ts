import { expect, test } from "bun:test";
import { CHAT_ERROR_BY_STATUS, STREAM_ERROR_STATUS } from "@turnpike/schema";
import * as client from "./index.js";

test("the client entry re-exports the same table", () => {
  expect(client.STREAM_ERROR_STATUS).toBe(STREAM_ERROR_STATUS);
  expect(client.CHAT_ERROR_BY_STATUS).toBe(CHAT_ERROR_BY_STATUS);
});
