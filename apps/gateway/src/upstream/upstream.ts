import type { CatalogEntry, Protocol, Vendor } from "../routing/catalog";

/** Where calls for one vendor go. */
export interface Upstream {
  vendor: Vendor;
  /** Per the vendor's own client-library convention: chat-protocol bases end in `/v1`. */
  baseURL: string;
  apiKey: string;
  /** Served by Turnpike's built-in simulator. */
  simulated: boolean;
}

/** Upstream header names and the one protocol version the messages upstream is spoken at. */
const UPSTREAM_HEADER = {
  messagesKey: "x-api-key",
  messagesVersion: "anthropic-version",
  messagesBeta: "anthropic-beta",
  generateKey: "x-goog-api-key",
} as const;
export const MESSAGES_UPSTREAM_VERSION = "2023-06-01";

/** Client-facing names of the messages format's beta header (ours, and the standard client's). */
const CLIENT_BETA_HEADERS = ["alpha-beta", "anthropic-beta"] as const;

export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
}

function trimSlash(s: string): string {
  return s.endsWith("/") ? s.slice(0, -1) : s;
}

/** The URL and headers of one upstream call (the body is built by the caller). */
export function upstreamCall(
  up: Upstream,
  entry: CatalogEntry,
  protocol: Protocol,
  stream: boolean,
  clientHeaders: Headers,
): UpstreamCall {
  const base = trimSlash(up.baseURL);
  const headers: Record<string, string> = { "content-type": "application/json" };
  switch (protocol) {
    case "messages": {
      headers[UPSTREAM_HEADER.messagesKey] = up.apiKey;
      headers[UPSTREAM_HEADER.messagesVersion] = MESSAGES_UPSTREAM_VERSION;
      // Betas pass through verbatim to a messages upstream (wire-formats.md §1.1), merged with
      // the catalog entry's own (the context-1m entry).
      const betas = new Set<string>();
      for (const h of CLIENT_BETA_HEADERS) {
        for (const b of (clientHeaders.get(h) ?? "").split(",")) if (b.trim()) betas.add(b.trim());
      }
      const own = entry.upstream_headers[UPSTREAM_HEADER.messagesBeta];
      if (own) for (const b of own.split(",")) betas.add(b.trim());
      for (const [k, v] of Object.entries(entry.upstream_headers)) if (k !== UPSTREAM_HEADER.messagesBeta) headers[k] = v;
      if (betas.size) headers[UPSTREAM_HEADER.messagesBeta] = [...betas].join(",");
      return { url: `${base}/v1/messages`, headers };
    }
    case "chat":
      headers.authorization = `Bearer ${up.apiKey}`;
      Object.assign(headers, entry.upstream_headers);
      return { url: `${base}/chat/completions`, headers };
    case "generate": {
      headers[UPSTREAM_HEADER.generateKey] = up.apiKey;
      Object.assign(headers, entry.upstream_headers);
      const m = encodeURIComponent(entry.upstream_model);
      return {
        url: stream ? `${base}/v1beta/models/${m}:streamGenerateContent?alt=sse` : `${base}/v1beta/models/${m}:generateContent`,
        headers,
      };
    }
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** The count-tokens call of protocols that have one; chat completions has none. */
export function upstreamCountCall(up: Upstream, entry: CatalogEntry, protocol: Protocol): UpstreamCall | undefined {
  const base = trimSlash(up.baseURL);
  switch (protocol) {
    case "messages":
      return {
        url: `${base}/v1/messages/count_tokens`,
        // The entry's own headers (the context-1m beta) count against the same context window.
        headers: {
          "content-type": "application/json",
          [UPSTREAM_HEADER.messagesKey]: up.apiKey,
          [UPSTREAM_HEADER.messagesVersion]: MESSAGES_UPSTREAM_VERSION,
          ...entry.upstream_headers,
        },
      };
    case "generate":
      return {
        url: `${base}/v1beta/models/${encodeURIComponent(entry.upstream_model)}:countTokens`,
        headers: { "content-type": "application/json", [UPSTREAM_HEADER.generateKey]: up.apiKey },
      };
    case "chat":
      return undefined;
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** The countTokens body of generateContent: the same request the call sends, wrapped. */
export function generateCountBody(body: object, entry: CatalogEntry): { generateContentRequest: object } {
  return { generateContentRequest: { ...body, model: `models/${entry.upstream_model}` } };
}
