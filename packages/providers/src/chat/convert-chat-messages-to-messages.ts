/**
 * Chat `messages` → messages-format `system` + `messages` (docs/protocols.md §4.1): system and
 * developer messages anywhere are joined in order into `system`; consecutive tool messages
 * become one user turn of `tool_result` blocks; consecutive same-role turns are merged, with
 * tool results first in a user turn.
 */
import type {
  CacheControl,
  ChatAssistantMessage,
  ChatContentPart,
  ChatMessage,
  ChatUserMessage,
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
} from "@turnpike/schema";
import { invalidRequest } from "../errors.js";
import { randomId, sanitizeToolId } from "../ids.js";
import { parseToolArguments } from "../json.js";
import { noteDerived, type FieldNames } from "../client-paths.js";
import { checkImageMediaType, isHttpUrl, parseDataUrl } from "../media.js";
import type { Warnings } from "../warnings.js";

export interface ConvertedChatMessages {
  /** Text, or text blocks when a system part carried a cache breakpoint. */
  system: string | TextBlockParam[] | undefined;
  messages: MessageParam[];
}

interface Turn {
  role: "user" | "assistant";
  content: ContentBlockParam[];
}

/** Tool-call ids seen in assistant turns: client id → id used in the pivot. */
class ToolIds {
  private readonly byClientId = new Map<string, string>();
  /** Legacy `function_call`s by function name, newest last. */
  private readonly legacy = new Map<string, string[]>();

  add(clientId: string): string {
    const existing = this.byClientId.get(clientId);
    if (existing) return existing;
    const id = sanitizeToolId(clientId);
    this.byClientId.set(clientId, id);
    return id;
  }

  addLegacy(name: string): string {
    const id = randomId("toolu_");
    const list = this.legacy.get(name) ?? [];
    list.push(id);
    this.legacy.set(name, list);
    return id;
  }

  lookup(clientId: string): string | undefined {
    return this.byClientId.get(clientId);
  }

  takeLegacy(name: string): string | undefined {
    return this.legacy.get(name)?.shift();
  }
}

function textOfParts(content: string | { type: "text"; text: string }[]): string {
  return typeof content === "string" ? content : content.map((p) => p.text).join("");
}

export function convertChatMessagesToMessages(chatMessages: ChatMessage[], warnings: Warnings): ConvertedChatMessages {
  const systemParts: string[] = [];
  // The breakpoint of each system message, if its parts carried one (same index as systemParts).
  const systemBreaks: (CacheControl | undefined)[] = [];
  const turns: Turn[] = [];
  const ids = new ToolIds();
  let sawConversation = false;

  chatMessages.forEach((msg, i) => {
    const at = `messages[${i}]`;
    switch (msg.role) {
      case "system":
      case "developer": {
        const text = textOfParts(msg.content);
        if (text.length > 0) {
          systemParts.push(text);
          systemBreaks.push(
            typeof msg.content === "string"
              ? undefined
              : (msg.content.findLast((p) => p.cache_control)?.cache_control ?? undefined),
          );
        }
        if (sawConversation) {
          warnings.add(
            `${at}.role`,
            `a ${msg.role} message after the conversation started was moved into the top-level system prompt`,
          );
        }
        if (msg.name) warnings.add(`${at}.name`, "message names are not carried to this upstream");
        return;
      }
      case "user": {
        sawConversation = true;
        if (msg.name) warnings.add(`${at}.name`, "message names are not carried to this upstream");
        turns.push({ role: "user", content: convertUserContent(msg, at) });
        return;
      }
      case "assistant": {
        sawConversation = true;
        const content = convertAssistant(msg, at, ids, warnings);
        if (content.length === 0) {
          warnings.add(
            at,
            "an assistant message with no content and no tool calls was omitted (the messages format rejects empty turns)",
          );
          return;
        }
        turns.push({ role: "assistant", content });
        return;
      }
      case "tool": {
        sawConversation = true;
        const id = ids.lookup(msg.tool_call_id);
        if (!id) {
          throw invalidRequest(
            `${at}.tool_call_id`,
            `no earlier assistant tool call has the id "${msg.tool_call_id}"; every tool message must answer a tool call`,
          );
        }
        const text = textOfParts(msg.content);
        const result: ContentBlockParam = {
          type: "tool_result",
          tool_use_id: id,
          ...(text.length > 0 ? { content: text } : {}),
        };
        noteDerived(result, msg, at, TOOL_RESULT_FIELDS);
        turns.push({ role: "user", content: [result] });
        return;
      }
      case "function": {
        sawConversation = true;
        const id = ids.takeLegacy(msg.name);
        if (!id) throw invalidRequest(`${at}.name`, `no earlier assistant function_call named "${msg.name}"`);
        const text = msg.content ?? "";
        turns.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: id, ...(text ? { content: text } : {}) }],
        });
        return;
      }
      default: {
        const never: never = msg;
        // Unreachable by type; a body the validator let through can still name another role, so read it loosely.
        throw invalidRequest(at, `unknown role ${JSON.stringify((never as { role?: unknown }).role)}`);
      }
    }
  });

  const messages = mergeTurns(turns);
  noteDerived(messages, chatMessages, "messages", undefined, { whole: true });
  if (messages.length === 0) {
    throw invalidRequest("messages", "at least one user or assistant message with content is required");
  }
  // One text block per system message when any carried a breakpoint, so that it stays where it was.
  if (systemBreaks.some((b) => b !== undefined)) {
    return {
      system: systemParts.map((text, k) => ({
        type: "text",
        text,
        ...(systemBreaks[k] ? { cache_control: systemBreaks[k] } : {}),
      })),
      messages,
    };
  }
  return { system: systemParts.length > 0 ? systemParts.join("\n\n") : undefined, messages };
}

/** Consecutive same-role turns → one; inside a user turn, tool results go first (§4.1). */
function mergeTurns(turns: Turn[]): MessageParam[] {
  const out: Turn[] = [];
  for (const t of turns) {
    if (t.content.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === t.role) last.content.push(...t.content);
    else out.push({ role: t.role, content: [...t.content] });
  }
  return out.map((t) => {
    if (t.role !== "user") return t;
    const results = t.content.filter((b) => b.type === "tool_result");
    if (results.length === 0) return t;
    return { role: t.role, content: [...results, ...t.content.filter((b) => b.type !== "tool_result")] };
  });
}

function convertUserContent(msg: ChatUserMessage, at: string): ContentBlockParam[] {
  if (typeof msg.content === "string") return msg.content.length > 0 ? [{ type: "text", text: msg.content }] : [];
  const out: ContentBlockParam[] = [];
  msg.content.forEach((part, j) => {
    const block = convertUserPart(part, `${at}.content[${j}]`);
    if (!block) return;
    noteDerived(block, part, `${at}.content[${j}]`, PART_FIELDS[part.type]);
    out.push(block);
  });
  return out;
}

/** A pivot block's fields as a chat part names them, by the part's type (client-paths.ts). */
const PART_FIELDS: Partial<Record<ChatContentPart["type"], FieldNames>> = {
  image_url: { source: "image_url", "source.url": "image_url.url", "source.media_type": "image_url.url" },
  file: { source: "file.file_data", "source.media_type": "file.file_data", "source.data": "file.file_data" },
};
const TOOL_RESULT_FIELDS: FieldNames = { tool_use_id: "tool_call_id" };

function convertUserPart(part: ChatContentPart, at: string): ContentBlockParam | undefined {
  switch (part.type) {
    case "text":
      // A breakpoint a chat client put on a part (the common extension) stays on its block.
      return part.text.length > 0
        ? { type: "text", text: part.text, ...(part.cache_control ? { cache_control: part.cache_control } : {}) }
        : undefined;
    case "image_url": {
      const image = convertImageUrl(part.image_url.url, `${at}.image_url.url`);
      return part.cache_control && image.type === "image" ? { ...image, cache_control: part.cache_control } : image;
    }
    case "input_audio":
      throw invalidRequest(
        `${at}`,
        "audio input cannot be translated for this model (the messages format has no audio blocks)",
      );
    case "file":
      return convertFilePart(part.file, at);
    default: {
      const never: never = part;
      // Unreachable by type; an unvalidated part can still carry another type, so read it loosely.
      throw invalidRequest(at, `unknown content part type ${JSON.stringify((never as { type?: unknown }).type)}`);
    }
  }
}

/** `image_url.url` → image block: data URL → base64 source, http(s) → url source (§4.1). */
export function convertImageUrl(url: string, at: string): ContentBlockParam {
  const data = parseDataUrl(url);
  if (data) {
    return {
      type: "image",
      source: { type: "base64", media_type: checkImageMediaType(data.mediaType, at), data: data.data },
    };
  }
  if (isHttpUrl(url)) return { type: "image", source: { type: "url", url } };
  throw invalidRequest(at, `expected an http(s) URL or a base64 data URL, got "${url.slice(0, 40)}…"`);
}

function convertFilePart(
  file: { file_data?: string; file_id?: string; filename?: string },
  at: string,
): ContentBlockParam {
  if (file.file_id && !file.file_data) {
    throw invalidRequest(
      `${at}.file.file_id`,
      "uploaded file ids belong to one vendor and cannot be sent to this model; send file_data instead",
    );
  }
  if (!file.file_data) throw invalidRequest(`${at}.file`, "file_data is required");
  const parsed = parseDataUrl(file.file_data);
  // A bare base64 string (no data: prefix) is taken as a PDF, the only file type chat accepts.
  const mediaType = parsed?.mediaType ?? "application/pdf";
  const data = parsed?.data ?? file.file_data;
  const title = file.filename ? { title: file.filename } : {};
  if (mediaType === "application/pdf")
    return { type: "document", source: { type: "base64", media_type: "application/pdf", data }, ...title };
  if (mediaType === "text/plain") {
    return {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: decodeBase64Text(data) },
      ...title,
    };
  }
  if (mediaType.startsWith("image/")) {
    return {
      type: "image",
      source: { type: "base64", media_type: checkImageMediaType(mediaType, `${at}.file.file_data`), data },
    };
  }
  throw invalidRequest(
    `${at}.file.file_data`,
    `file type "${mediaType}" is not supported; expected application/pdf, text/plain or an image`,
  );
}

function decodeBase64Text(data: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
}

function convertAssistant(
  msg: ChatAssistantMessage,
  at: string,
  ids: ToolIds,
  warnings: Warnings,
): ContentBlockParam[] {
  const out: ContentBlockParam[] = [];
  if (msg.reasoning_content) {
    // Chat clients cannot carry the signature a messages upstream requires on replayed thinking
    // (docs/protocols.md §4.2), so reasoning history is not replayed.
    warnings.add(
      `${at}.reasoning_content`,
      "reasoning history is not replayed to this upstream (it accepts only signed thinking blocks)",
    );
  }
  if (msg.name) warnings.add(`${at}.name`, "message names are not carried to this upstream");
  if (msg.audio) warnings.add(`${at}.audio`, "audio replies cannot be replayed to this upstream");
  const content = msg.content;
  if (typeof content === "string") {
    if (content.length > 0) out.push({ type: "text", text: content });
  } else if (Array.isArray(content)) {
    for (const p of content) {
      const text = p.type === "text" ? p.text : p.refusal;
      if (text.length > 0) out.push({ type: "text", text });
    }
  }
  if (out.length === 0 && msg.refusal) out.push({ type: "text", text: msg.refusal });
  (msg.tool_calls ?? []).forEach((call, k) => {
    if (call.type !== "function") {
      throw invalidRequest(
        `${at}.tool_calls[${k}]`,
        "custom (free-form) tool calls cannot be translated for this model",
      );
    }
    out.push({
      type: "tool_use",
      id: call.id ? ids.add(call.id) : ids.add(randomId("call_")),
      name: call.function.name,
      input: parseToolArguments(call.function.arguments),
    });
  });
  if (msg.function_call) {
    out.push({
      type: "tool_use",
      id: ids.addLegacy(msg.function_call.name),
      name: msg.function_call.name,
      input: parseToolArguments(msg.function_call.arguments),
    });
  }
  return out;
}
