import { describe, expect, test } from "bun:test";
import { clientPath, inClientTerms, noteDerived, noteOrigin } from "./client-paths.js";
import { GatewayError, invalidRequest } from "./errors.js";

describe("client paths", () => {
  test("a noted block's path and fields; the longest renamed prefix wins; unnoted paths unchanged", () => {
    const block = { type: "image", source: { type: "url", url: "https://x" } };
    const pivot = { messages: [{ role: "user", content: [{ type: "text" }, block] }] };
    noteOrigin(block, "messages[3].content[1]", { source: "image_url", "source.url": "image_url.url" });
    expect(clientPath(pivot, "messages[0].content[1].source.url")).toBe("messages[3].content[1].image_url.url");
    expect(clientPath(pivot, "messages[0].content[1].source")).toBe("messages[3].content[1].image_url");
    expect(clientPath(pivot, "messages[0].content[1].source.type")).toBe("messages[3].content[1].image_url.type");
    expect(clientPath(pivot, "messages[0].content[1]")).toBe("messages[3].content[1]");
    expect(clientPath(pivot, "messages[0].content[0]")).toBe("messages[0].content[0]");
    expect(clientPath(pivot, "max_tokens")).toBe("max_tokens");
  });

  test("a whole-only note maps the array itself, never its renumbered items", () => {
    const messages = [{ role: "user", content: "Hi" }];
    noteOrigin(messages, "input", undefined, { whole: true });
    expect(clientPath({ messages }, "messages")).toBe("input");
    expect(clientPath({ messages }, "messages[0].content")).toBe("messages[0].content");
  });

  test("derived through an intermediate request: pivot → chat form → the client's Responses names", () => {
    const part = { type: "image_url", image_url: { url: "data:image/bmp;base64,AA" } };
    noteOrigin(part, "input[2].content[1]", { image_url: "image_url", "image_url.url": "image_url" });
    const block = { type: "image", source: { type: "url", url: "x" } };
    noteDerived(block, part, "messages[1].content[1]", { source: "image_url", "source.url": "image_url.url" });
    expect(clientPath({ messages: [{ content: [block] }] }, "messages[0].content[0].source.url")).toBe(
      "input[2].content[1].image_url",
    );
    // Without a note on the intermediate object, its own path.
    const plain = {};
    const other = { type: "tool_result" };
    noteDerived(other, plain, "messages[4]", { tool_use_id: "tool_call_id" });
    expect(clientPath({ m: other }, "m.tool_use_id")).toBe("messages[4].tool_call_id");
  });

  test("an error is renamed in param and message; others pass unchanged", () => {
    const block = { source: { url: "u" } };
    noteOrigin(block, "contents[0].parts[2]", { source: "fileData", "source.url": "fileData.fileUri" });
    const pivot = { messages: [{ content: [block] }] };
    const renamed = inClientTerms(invalidRequest("messages[0].content[0].source.url", "cannot fetch"), pivot);
    expect(renamed).toBeInstanceOf(GatewayError);
    expect([
      (renamed as GatewayError).param,
      (renamed as GatewayError).message,
      (renamed as GatewayError).status,
    ]).toEqual(["contents[0].parts[2].fileData.fileUri", "contents[0].parts[2].fileData.fileUri: cannot fetch", 400]);
    const plain = new Error("boom");
    expect(inClientTerms(plain, pivot)).toBe(plain);
    const unnoted = invalidRequest("n", "only n=1");
    expect(inClientTerms(unnoted, pivot)).toBe(unnoted);
  });
});
