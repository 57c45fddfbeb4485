/**
 * Messages-format turns → generateContent parts (docs/protocols.md §3.2, §4.1): tool_use →
 * `functionCall` with its thought signature (stored, or the skip value on a turn's first call,
 * §3.7); tool_result → `functionResponse` named after the earlier call, `{output}` or `{error}`;
 * base64 images and PDFs → `inlineData`; Files-API and YouTube URLs → `fileData`; other URLs → 400.
 */
import type { ContentBlockParam, ToolResultBlockParam } from "@turnpike/schema";
import { invalidRequest } from "../errors.js";
import type { SignatureStore } from "../signature-store.js";
import type { Warnings } from "../warnings.js";
import type { GeneratePart } from "./types.js";
import { warnCitations } from "../citations.js";

/** Google's documented escape hatch for history the gateway cannot sign (§3.7). */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** Files-API URIs and YouTube links are the only URLs Gemini fetches itself. */
function isGeminiFetchable(url: string): boolean {
  return (
    /^https:\/\/generativelanguage\.googleapis\.com\/[^?#]*\/files\//.test(url) ||
    /^https:\/\/(www\.)?(youtube\.com|youtu\.be)\//.test(url)
  );
}

function blocksOf(content: string | ContentBlockParam[]): ContentBlockParam[] {
  return typeof content === "string" ? (content.length > 0 ? [{ type: "text", text: content }] : []) : content;
}

export function assistantParts(
  content: string | ContentBlockParam[],
  at: string,
  nameOf: (n: string) => string,
  signatures: SignatureStore | undefined,
  w: Warnings,
): GeneratePart[] {
  const parts: GeneratePart[] = [];
  let firstCall = true;
  blocksOf(content).forEach((b, j) => {
    warnCitations(b, `${at}.content[${j}]`, "generateContent", w);
    switch (b.type) {
      case "text":
        if (b.text) parts.push({ text: b.text });
        return;
      case "tool_use": {
        const part: GeneratePart = { functionCall: { name: nameOf(b.name), args: b.input ?? {} } };
        // The stored signature, else the documented skip value on the turn's first call (only the
        // first call of a parallel turn carries one, §3.7).
        const sig = signatures?.get(b.id) ?? (firstCall ? SKIP_THOUGHT_SIGNATURE : undefined);
        if (sig) part.thoughtSignature = sig;
        firstCall = false;
        parts.push(part);
        return;
      }
      case "thinking":
      case "redacted_thinking":
        w.add("thinking", "earlier thinking blocks are not replayed to this upstream");
        return;
      default:
        w.add(
          `${at}.content[${j}]`,
          `"${b.type}" blocks cannot be sent in an assistant turn to this upstream; it was not sent`,
        );
        return;
    }
  });
  return parts;
}

export function userParts(
  content: string | ContentBlockParam[],
  at: string,
  callNames: Map<string, string>,
  nameOf: (n: string) => string,
  w: Warnings,
): GeneratePart[] {
  const responses: GeneratePart[] = [];
  const parts: GeneratePart[] = [];
  blocksOf(content).forEach((b, j) => {
    const bat = `${at}.content[${j}]`;
    if (b.type === "tool_result") {
      responses.push(functionResponse(b, bat, callNames, nameOf, parts, w));
      return;
    }
    parts.push(...mediaParts(b, bat, w));
  });
  // Function responses first, in call order, then the rest of the turn (§4.1).
  return [...responses, ...parts];
}

function functionResponse(
  b: ToolResultBlockParam,
  at: string,
  callNames: Map<string, string>,
  nameOf: (n: string) => string,
  extra: GeneratePart[],
  w: Warnings,
): GeneratePart {
  const name = callNames.get(b.tool_use_id);
  if (!name) {
    throw invalidRequest(
      `${at}.tool_use_id`,
      `no earlier tool_use block has the id "${b.tool_use_id}"; every tool_result must answer a tool call`,
    );
  }
  let text = "";
  if (typeof b.content === "string") text = b.content;
  else if (Array.isArray(b.content)) {
    const texts: string[] = [];
    b.content.forEach((c, k) => {
      if (c.type === "text") texts.push(c.text);
      else extra.push(...mediaParts(c, `${at}.content[${k}]`, w));
    });
    text = texts.join("\n");
  }
  // SDK guidance: `output` for a result, `error` for a failure (§3.2, §4.1).
  const response = b.is_error === true ? { error: text } : { output: text };
  return { functionResponse: { name: nameOf(name), response } };
}

function mediaParts(b: ContentBlockParam, at: string, w: Warnings): GeneratePart[] {
  warnCitations(b, at, "generateContent", w);
  switch (b.type) {
    case "text":
      return b.text ? [{ text: b.text }] : [];
    case "image": {
      const s = b.source;
      if (s.type === "base64") return [{ inlineData: { mimeType: s.media_type, data: s.data } }];
      if (s.type === "url") return [urlPart(s.url, undefined, `${at}.source.url`)];
      throw invalidRequest(
        `${at}.source`,
        "uploaded file ids cannot be sent to this upstream; send the image as base64",
      );
    }
    case "document": {
      const s = b.source;
      if (s.type === "base64") return [{ inlineData: { mimeType: s.media_type, data: s.data } }];
      if (s.type === "text") return [{ text: b.title ? `${b.title}\n\n${s.data}` : s.data }];
      if (s.type === "content") {
        if (typeof s.content === "string") return s.content ? [{ text: s.content }] : [];
        return s.content.flatMap((c, k) => mediaParts(c, `${at}.source.content[${k}]`, w));
      }
      if (s.type === "url") return [urlPart(s.url, "application/pdf", `${at}.source.url`)];
      throw invalidRequest(
        `${at}.source`,
        "uploaded file ids cannot be sent to this upstream; send the document as base64",
      );
    }
    case "thinking":
    case "redacted_thinking":
      w.add("thinking", "earlier thinking blocks are not replayed to this upstream");
      return [];
    case "tool_use":
      throw invalidRequest(at, "a tool_use block belongs in an assistant turn");
    default:
      w.add(at, `"${b.type}" blocks (server tools) are only understood by messages-format upstreams; it was not sent`);
      return [];
  }
}

function urlPart(url: string, mimeType: string | undefined, at: string): GeneratePart {
  if (isGeminiFetchable(url)) return { fileData: { ...(mimeType ? { mimeType } : {}), fileUri: url } };
  throw invalidRequest(
    at,
    "this upstream cannot fetch URLs (only its own Files API and YouTube links); send the content as base64 instead",
  );
}
