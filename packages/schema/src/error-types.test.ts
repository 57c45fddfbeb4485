import { expect, test } from "bun:test";
import {
  CHAT_ERROR_BY_STATUS,
  MESSAGES_ERROR_STATUS_BY_TYPE,
  STREAM_ERROR_STATUS,
  chatClientStatus,
  chatErrorType,
  messagesClientStatus,
  messagesErrorType,
} from "./index.js";

test("each messages type maps back to a status that maps to it", () => {
  for (const [type, status] of Object.entries(MESSAGES_ERROR_STATUS_BY_TYPE))
    expect<string>(messagesErrorType(status)).toBe(type);
});

test("every chat type and code the table renders has an in-stream status", () => {
  for (const { type, code } of Object.values(CHAT_ERROR_BY_STATUS)) {
    expect(STREAM_ERROR_STATUS[type]).toBeNumber();
    if (code !== null) expect(STREAM_ERROR_STATUS[code]).toBeNumber();
  }
});

test("overloaded: 503 and 529 are one error, sent as 529 in the messages format and 503 in chat", () => {
  expect([messagesErrorType(503), messagesErrorType(529)]).toEqual(["overloaded_error", "overloaded_error"]);
  expect(chatErrorType(529)).toEqual(chatErrorType(503));
  expect([messagesClientStatus(503), chatClientStatus(529)]).toEqual([529, 503]);
});
