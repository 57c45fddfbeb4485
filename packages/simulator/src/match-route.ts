import type { Protocol } from "./simulator-options";

/** What a request asks for, decided from its method and path alone. */
export type Route =
  | { kind: "reply"; protocol: Protocol; model?: string; stream?: boolean; sse?: boolean }
  | { kind: "count"; protocol: Protocol; model?: string }
  | { kind: "embed"; protocol: Protocol; model?: string; batch?: boolean }
  | { kind: "models"; protocol: Protocol; id?: string }
  | { kind: "unknown"; protocol: Protocol };

const GENERATE_PREFIX = "/v1beta/models/";

/** Path segments are URL-encoded; a malformed escape is kept as written. */
function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Routes of the three protocols on one origin: alpha base = origin, beta/delta base = origin +
 * "/v1", gamma base = origin. `GET /v1/models` is shared by two protocols; the messages shape is
 * served when the caller sends an `x-api-key` or `anthropic-version` header.
 */
export function matchRoute(method: string, path: string, query: string, headers: Headers): Route {
  if (method === "POST") {
    if (path === "/v1/messages") return { kind: "reply", protocol: "messages" };
    if (path === "/v1/chat/completions") return { kind: "reply", protocol: "chat" };
    if (path === "/v1/embeddings") return { kind: "embed", protocol: "chat" };
    if (path === "/v1/responses") return { kind: "reply", protocol: "responses" };
    if (path === "/v1/responses/input_tokens") return { kind: "count", protocol: "responses" };
    if (path === "/v1/messages/count_tokens") return { kind: "count", protocol: "messages" };
    if (path.startsWith(GENERATE_PREFIX)) {
      const rest = path.slice(GENERATE_PREFIX.length);
      const colon = rest.lastIndexOf(":");
      const model = decode(rest.slice(0, colon));
      const verb = rest.slice(colon + 1);
      if (colon > 0 && verb === "generateContent") return { kind: "reply", protocol: "generate", model, stream: false };
      if (colon > 0 && verb === "streamGenerateContent") {
        return {
          kind: "reply",
          protocol: "generate",
          model,
          stream: true,
          sse: new URLSearchParams(query).get("alt") === "sse",
        };
      }
      if (colon > 0 && verb === "countTokens") return { kind: "count", protocol: "generate", model };
      if (colon > 0 && (verb === "embedContent" || verb === "batchEmbedContents"))
        return { kind: "embed", protocol: "generate", model, batch: verb === "batchEmbedContents" };
    }
  } else if (method === "GET") {
    if (path === "/v1/models" || path.startsWith("/v1/models/")) {
      const protocol = headers.has("x-api-key") || headers.has("anthropic-version") ? "messages" : "chat";
      const id = path.slice("/v1/models/".length);
      return id ? { kind: "models", protocol, id: decode(id) } : { kind: "models", protocol };
    }
    if (path === "/v1beta/models") return { kind: "models", protocol: "generate" };
    if (path.startsWith(GENERATE_PREFIX))
      return { kind: "models", protocol: "generate", id: decode(path.slice(GENERATE_PREFIX.length)) };
  }
  if (path.startsWith("/v1beta")) return { kind: "unknown", protocol: "generate" };
  if (path.startsWith("/v1/messages")) return { kind: "unknown", protocol: "messages" };
  return { kind: "unknown", protocol: "chat" };
}
