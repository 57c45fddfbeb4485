/**
 * Messages-format turns → chat messages (docs/protocols.md §4.1): tool_use → `tool_calls`;
 * tool_result → one `tool` message each, before the user's own parts, with images and documents
 * (which a tool message cannot hold) in a following user message; `is_error` prefixes the text.
 */
import type {
  ChatContentPart,
  ChatMessage,
  ChatToolCall,
  ContentBlockParam,
  ToolResultBlockParam,
} from "@turnpike/schema";
import { invalidRequest } from "../errors.js";
import { toDataUrl } from "../media.js";
import { warnCitations } from "../citations.js";
import type { Warnings } from "../warnings.js";
import type { ToolNames } from "./tool-names.js";

function blocksOf(content: string | ContentBlockParam[]): ContentBlockParam[] {
  return typeof content === "string" ? (content.length > 0 ? [{ type: "text", text: content }] : []) : content;
}

export function convertMessage(
  role: "user" | "assistant",
  content: string | ContentBlockParam[],
  at: string,
  names: ToolNames,
  w: Warnings,
): ChatMessage[] {
  if (role === "assistant") return [convertAssistant(blocksOf(content), at, names, w)];
  if (typeof content === "string") return [{ role: "user", content }];

  // Tool results become one `tool` message each, before the user's own parts (§4.1); parts a
  // tool message cannot hold (images, documents) follow in a user message.
  const out: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  const fromResults: ChatContentPart[] = [];
  content.forEach((b, j) => {
    const bat = `${at}.content[${j}]`;
    if (b.type === "tool_result") {
      out.push(toolMessage(b, bat, fromResults, names, w));
      return;
    }
    const part = userPart(b, bat, names, w);
    if (part) parts.push(part);
  });
  const rest = [...fromResults, ...parts];
  if (rest.length > 0) {
    const only = rest.length === 1 ? rest[0] : undefined;
    out.push({ role: "user", content: only?.type === "text" ? only.text : rest });
  }
  return out;
}

function toolMessage(
  b: ToolResultBlockParam,
  at: string,
  extra: ChatContentPart[],
  names: ToolNames,
  w: Warnings,
): ChatMessage {
  if (b.cache_control) names.hasCacheControl = true;
  let text = "";
  if (typeof b.content === "string") text = b.content;
  else if (Array.isArray(b.content)) {
    const texts: string[] = [];
    b.content.forEach((c, k) => {
      if (c.type === "text") texts.push(c.text);
      else {
        const part = userPart(c, `${at}.content[${k}]`, names, w);
        if (part) extra.push(part);
      }
    });
    text = texts.join("\n");
  }
  // The chat format has no error flag on tool messages; the text says it instead (§4.1).
  if (b.is_error === true) text = text ? `Error: ${text}` : "Error";
  return { role: "tool", tool_call_id: b.tool_use_id, content: text };
}

function userPart(b: ContentBlockParam, at: string, names: ToolNames, w: Warnings): ChatContentPart | undefined {
  if ("cache_control" in b && b.cache_control) names.hasCacheControl = true;
  warnCitations(b, at, "chat-completions", w);
  switch (b.type) {
    case "text":
      return { type: "text", text: b.text };
    case "image": {
      const s = b.source;
      if (s.type === "base64") return { type: "image_url", image_url: { url: toDataUrl(s.media_type, s.data) } };
      if (s.type === "url") return { type: "image_url", image_url: { url: s.url } };
      throw invalidRequest(
        `${at}.source`,
        "uploaded file ids cannot be sent to a chat-completions upstream; send the image as base64 or URL",
      );
    }
    case "document": {
      const s = b.source;
      const title = b.title ?? undefined;
      if (s.type === "base64") {
        return {
          type: "file",
          file: { file_data: toDataUrl(s.media_type, s.data), filename: title ?? "document.pdf" },
        };
      }
      if (s.type === "text") return { type: "text", text: title ? `${title}\n\n${s.data}` : s.data };
      if (s.type === "content") {
        const text =
          typeof s.content === "string"
            ? s.content
            : s.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
        return { type: "text", text };
      }
      throw invalidRequest(
        `${at}.source`,
        `a "${s.type}" document source cannot be sent to a chat-completions upstream; send the PDF as base64`,
      );
    }
    case "thinking":
    case "redacted_thinking":
      w.add("thinking", "thinking blocks are not sent to chat-completions upstreams");
      return undefined;
    case "tool_use":
    case "tool_result":
      throw invalidRequest(at, `a ${b.type} block is not allowed here`);
    default:
      w.add(at, `"${b.type}" blocks (server tools) are only understood by messages-format upstreams; it was not sent`);
      return undefined;
  }
}

function convertAssistant(blocks: ContentBlockParam[], at: string, names: ToolNames, w: Warnings): ChatMessage {
  const texts: string[] = [];
  const calls: ChatToolCall[] = [];
  let reasoning = "";
  blocks.forEach((b, j) => {
    if ("cache_control" in b && b.cache_control) names.hasCacheControl = true;
    warnCitations(b, `${at}.content[${j}]`, "chat-completions", w);
    switch (b.type) {
      case "text":
        texts.push(b.text);
        return;
      case "tool_use":
        calls.push({
          id: b.id,
          type: "function",
          function: { name: names.toUpstream(b.name), arguments: JSON.stringify(b.input ?? {}) },
        });
        return;
      case "thinking":
        // An unsigned thinking block came from a chat upstream's reasoning_content (§4.2); give it
        // back the same way (DeepSeek's thinking mode requires it). Signed ones belong to the
        // messages-format vendor and mean nothing here.
        if (b.signature === "" && b.thinking) reasoning += b.thinking;
        else w.add("thinking", "thinking blocks are not sent to chat-completions upstreams");
        return;
      case "redacted_thinking":
        w.add("thinking", "thinking blocks are not sent to chat-completions upstreams");
        return;
      default:
        w.add(
          `${at}.content[${j}]`,
          `"${b.type}" blocks cannot be sent in an assistant turn to a chat-completions upstream; it was not sent`,
        );
        return;
    }
  });
  // `content: null` is allowed only beside tool calls.
  const msg: ChatMessage = {
    role: "assistant",
    content: texts.length > 0 ? texts.join("") : calls.length > 0 ? null : "",
  };
  if (calls.length > 0) msg.tool_calls = calls;
  if (reasoning) msg.reasoning_content = reasoning;
  return msg;
}
