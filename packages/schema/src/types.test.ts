/**
 * The static types are what other packages code against: these functions only compile if the
 * unions narrow on `type` / `role` and every member is handled (docs/style.md rule 4).
 */
import { expect, test } from "bun:test";
import type {
  ChatChunk,
  ChatMessage,
  ContentBlock,
  ContentBlockParam,
  MessagesStreamEvent,
  ServerToolBlockParam,
} from "./index.js";

function assertNever(x: never): never {
  throw new Error(`unhandled: ${JSON.stringify(x)}`);
}

function describeParam(b: ContentBlockParam): string {
  switch (b.type) {
    case "text":
      return b.text;
    case "image":
      return `image:${b.source.type}`;
    case "document":
      return `document:${b.source.type}`;
    case "tool_use":
      return `call ${b.name}`;
    case "tool_result":
      return `result ${b.tool_use_id}`;
    case "thinking":
      return b.signature;
    case "redacted_thinking":
      return b.data;
    default:
      // Every translated block is handled above, so only pass-through server-tool blocks remain;
      // this assignment stops compiling if a new member is added to the union.
      return passThrough(b);
  }
}

function passThrough(b: ServerToolBlockParam): string {
  return `server ${b.type}`;
}

function outputText(blocks: ContentBlock[]): string {
  return blocks.map((b) => (b.type === "text" ? b.text : b.type === "thinking" ? `(${b.thinking})` : "")).join("");
}

function eventText(ev: MessagesStreamEvent): string {
  switch (ev.type) {
    case "content_block_delta":
      switch (ev.delta.type) {
        case "text_delta":
          return ev.delta.text;
        case "input_json_delta":
          return ev.delta.partial_json;
        case "thinking_delta":
          return ev.delta.thinking;
        case "signature_delta":
        case "citations_delta":
          return "";
        default:
          return assertNever(ev.delta);
      }
    case "message_start":
    case "content_block_start":
    case "content_block_stop":
    case "message_delta":
    case "message_stop":
    case "ping":
      return "";
    case "error":
      return ev.error.message;
    default:
      return assertNever(ev);
  }
}

function roleOf(m: ChatMessage): string {
  switch (m.role) {
    case "system":
    case "developer":
    case "user":
      return m.role;
    case "assistant":
      return m.tool_calls?.length ? "assistant+tools" : "assistant";
    case "tool":
      return `tool ${m.tool_call_id}`;
    case "function":
      return `function ${m.name}`;
    default:
      return assertNever(m);
  }
}

test("unions narrow on their discriminator", () => {
  expect(describeParam({ type: "text", text: "hi" })).toBe("hi");
  expect(describeParam({ type: "web_search_tool_result" })).toBe("server web_search_tool_result");
  expect(
    outputText([
      { type: "thinking", thinking: "hm" },
      { type: "text", text: "ok" },
    ]),
  ).toBe("(hm)ok");
  expect(eventText({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } })).toBe("Hel");
  expect(roleOf({ role: "tool", tool_call_id: "c1", content: "x" })).toBe("tool c1");
  const chunk: ChatChunk = {
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [],
    usage: null,
  };
  expect(chunk.choices).toHaveLength(0);
});
