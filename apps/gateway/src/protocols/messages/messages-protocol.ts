import {
  MessagesSSEMachine,
  convertMessagesRequestToMessages,
  messagesUsageFields,
  placeCacheBreakpoints,
  upstreamErrorToGatewayError,
} from "@turnpike/providers";
import type { MessagesRequest, MessagesResponse } from "@turnpike/schema";
import type { SSEMessage } from "@turnpike/schema/sse";
import type { UsageSink } from "../../vocabulary/usage-sink";
import type { Target } from "../../vocabulary/target";
import { namedModel } from "../model-label";
import { dataAfter, each, indexOfQuoted, parseRegion } from "../sse-scan";
import {
  authHeaders,
  putField,
  trimSlash,
  type PassthroughReader,
  type PassthroughState,
  type UpstreamProtocol,
} from "../upstream-protocol";
import { bodyText, derivedFrom } from "../body-text";
import { messagesBatches } from "./messages-batches";

/** The one version of the messages protocol Turnpike speaks upstream. */
export const MESSAGES_UPSTREAM_VERSION = "2023-06-01";
const VERSION_HEADER = "anthropic-version";
const BETA_HEADER = "anthropic-beta";
/** Client-facing names of the beta header (Turnpike's own, and the standard client's). */
export const CLIENT_BETA_HEADERS = ["alpha-beta", "anthropic-beta"] as const;
/** Client-facing names of the version header. */
const CLIENT_VERSION_HEADERS = ["anthropic-version", "alpha-version"] as const;

/** The text of a `content_block_delta` (read only if it must be counted). */
function deltaText(data: string): string {
  const d = (JSON.parse(data) as { delta?: Record<string, unknown> }).delta ?? {}; // vendor JSON, read leniently
  const text = d.text ?? d.partial_json ?? d.thinking;
  return typeof text === "string" ? text : "";
}

function readStart(data: string, sink: UsageSink): void {
  const ev = JSON.parse(data) as { message?: { usage?: unknown } }; // vendor JSON, read leniently
  const usage = messagesUsageFields(ev.message?.usage);
  // The start event's output count is a placeholder; only its input side is real.
  delete usage.output_tokens;
  sink.report(usage, false);
}

function readDelta(data: string, sink: UsageSink): void {
  const ev = JSON.parse(data) as { usage?: unknown }; // vendor JSON, read leniently
  if (!ev.usage) return;
  const usage = messagesUsageFields(ev.usage);
  sink.report(usage, (usage.output_tokens ?? 0) > 0);
}

/**
 * The headers of every call: the key, the protocol version and the betas. The vendor's gateway
 * contract for its coding agent says both must reach the upstream unchanged (docs/protocols.md
 * §1.1): the client's version header and beta header values are sent as they came — a beta
 * Turnpike has never heard of included — and only the catalog entry's own betas (the context-1m
 * entry) are appended when the client did not name them already.
 */
function upstreamHeaders(target: Target, clientHeaders: Headers): Record<string, string> {
  const c = compiledHeaders(target);
  let version: string = MESSAGES_UPSTREAM_VERSION;
  for (const h of CLIENT_VERSION_HEADERS) {
    const v = clientHeaders.get(h);
    if (v) {
      version = v;
      break;
    }
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  headers[c.authName] = c.authValue;
  headers[VERSION_HEADER] = version;
  for (let i = 0; i < c.extra.length; i += 2) headers[c.extra[i]!] = c.extra[i + 1]!;
  const a = clientHeaders.get(CLIENT_BETA_HEADERS[0]);
  const b = clientHeaders.get(CLIENT_BETA_HEADERS[1]);
  const betas = !a && !b ? c.ownBetas : clientBetas(c.own, a, b);
  if (betas) headers[BETA_HEADER] = betas;
  return headers;
}

/** The client's betas as sent, then the entry's own that the client did not name. */
function clientBetas(own: readonly string[], a: string | null, b: string | null): string {
  const sent = [a, b].filter((v): v is string => !!v);
  const named = new Set(sent.flatMap((v) => v.split(",").map((x) => x.trim())));
  return [...sent, ...own.filter((x) => !named.has(x))].join(",");
}

/**
 * What every call to one catalog entry on one upstream carries, worked out once (not per
 * request): the key's header, the entry's own headers, its own betas and the URL.
 */
interface CompiledHeaders {
  apiKey: string;
  baseURL: string;
  authName: string;
  authValue: string;
  /** The entry's headers but the beta header, as name, value, name, value… */
  extra: string[];
  /** The entry's own betas, and joined (what is sent when the client names none). */
  own: string[];
  ownBetas: string;
  url: string;
}

/**
 * By upstream, then by the entry's header record, which every copy of an entry shares (a key's
 * prompt-cache setting spreads the entry, not its headers); checked against the upstream's key
 * and address it was made with.
 */
const compiled = new WeakMap<Target["upstream"], WeakMap<Record<string, string>, CompiledHeaders>>();

function compiledHeaders({ entry, upstream }: Target): CompiledHeaders {
  const h = entry.upstream_headers;
  let byEntry = compiled.get(upstream);
  if (!byEntry) {
    byEntry = new WeakMap();
    compiled.set(upstream, byEntry);
  }
  const got = byEntry.get(h);
  if (got && got.apiKey === upstream.apiKey && got.baseURL === upstream.baseURL) return got;
  const [authName, authValue] = Object.entries(authHeaders(upstream.auth, upstream.apiKey))[0]!;
  const own = (h[BETA_HEADER] ?? "")
    .split(",")
    .map((b) => b.trim())
    .filter((b) => b);
  const c: CompiledHeaders = {
    apiKey: upstream.apiKey,
    baseURL: upstream.baseURL,
    authName,
    authValue,
    extra: Object.entries(h).flatMap(([k, v]) => (k === BETA_HEADER ? [] : [k, v])),
    own,
    ownBetas: own.join(","),
    url: `${trimSlash(upstream.baseURL)}/v1/messages`,
  };
  byEntry.set(h, c);
  return c;
}

const DELTA_EVENT = "event: content_block_delta\ndata: ";
/** The keys of a delta's text, each with the quote that opens its string value (searched after its own opening quote). */
const DELTA_KEYS = ['text":"', 'partial_json":"', 'thinking":"'];

/**
 * The JSON string whose text starts at `from` (just past its opening quote) and closes before
 * `end`, or undefined; parsed only if it holds an escape.
 */
function jsonStringAt(text: string, from: number, end: number): string | undefined {
  for (let q = text.indexOf('"', from); q !== -1 && q < end; q = text.indexOf('"', q + 1)) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === 92 /* \ */) slashes++;
    if (slashes % 2 === 1) continue; // an escaped quote
    const raw = text.slice(from, q);
    if (!raw.includes("\\")) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Usage from `message_start` and `message_delta`; the end from `message_stop` or `error`. */
const passthrough: PassthroughReader = {
  // Nothing of a messages event is changed (the model's name is put right by the tap, as text).
  raw: () => true,
  markers: ["event: message_", "event: error\n"],
  scan(region, sink, state) {
    // A flowing stream's region is most often one content frame: two searches rule it out (of four).
    if (!region.includes("event: message_") && !region.includes("event: error\n")) return;
    each(region, "event: message_start\n", (at) => {
      const data = dataAfter(region, at);
      if (data) readStart(data, sink);
    });
    each(region, "event: message_delta\n", (at) => {
      state.finished = true;
      const data = dataAfter(region, at);
      if (data) readDelta(data, sink);
    });
    if (region.includes("event: message_stop\n") || region.includes("event: error\n")) state.terminated = true;
  },
  inspect(msg, sink, _opts, state: PassthroughState): SSEMessage | undefined {
    switch (msg.event) {
      case "message_start":
        readStart(msg.data, sink);
        return msg;
      case "message_delta":
        state.finished = true;
        readDelta(msg.data, sink);
        return msg;
      case "message_stop":
      case "error":
        state.terminated = true;
        return msg;
      default:
        return msg;
    }
  },
  quickText(region) {
    let text = "";
    for (let at = region.indexOf(DELTA_EVENT); at !== -1; ) {
      let end = region.indexOf("\n", at + DELTA_EVENT.length);
      if (end === -1) end = region.length;
      // Each search bounded by its line: a key a delta lacks is not looked for through the rest.
      const line = region.slice(at + DELTA_EVENT.length, end);
      const delta = line.indexOf('"delta":{');
      if (delta === -1) return undefined;
      // deltaText's order: the first of these a delta has (a delta has one of them at most).
      let found: string | undefined;
      for (const key of DELTA_KEYS) {
        const k = indexOfQuoted(line, key, delta);
        if (k === -1) continue;
        found = jsonStringAt(line, k + key.length + 1, line.length);
        if (found === undefined) return undefined;
        break;
      }
      text += found ?? "";
      at = region.indexOf(DELTA_EVENT, end);
    }
    return text;
  },
  text(dataOrRegion) {
    if (dataOrRegion.charCodeAt(0) === 123 /* { */) return deltaText(dataOrRegion);
    let text = "";
    for (const msg of parseRegion(dataOrRegion)) if (msg.event === "content_block_delta") text += deltaText(msg.data);
    return text;
  },
};

/** The messages protocol (`POST {base}/v1/messages`): the pivot's own wire shape. */
export const messagesProtocol: UpstreamProtocol = {
  id: "messages",
  auth: "x-api-key",
  simulatorBase: (url) => url,
  inputAtStart: true,
  fromPivot(pivot, target) {
    const r = convertMessagesRequestToMessages(pivot, { upstreamModel: target.entry.upstream_model });
    return Promise.resolve({ body: r.body, warnings: r.warnings, toolNames: undefined });
  },
  buildRequest(target, body, { clientHeaders }) {
    // Turnpike's own cache breakpoints on a request that sets none (docs/protocols.md §1.6):
    // the body is the validated client request or the pivot's conversion, a MessagesRequest either way.
    const cached = target.entry.prompt_cache === "auto" ? placeCacheBreakpoints(body as MessagesRequest) : undefined;
    if (cached) derivedFrom(cached, body);
    return Promise.resolve({
      url: compiledHeaders(target).url,
      headers: upstreamHeaders(target, clientHeaders),
      body: bodyText(cached ?? body),
    });
  },
  machine: (_ctx, emit) => new MessagesSSEMachine({}, emit),
  // The vendor's reply is the pivot's shape; only the model is the client's.
  reply: (json, ctx) => ({ ...(json as MessagesResponse), model: ctx.model }),
  parseError: (status, text, headers) => upstreamErrorToGatewayError("messages", status, text, headers),
  count(target, body, clientHeaders) {
    const { max_tokens: _unused, stream: _stream, ...rest } = body;
    // The same headers as the call: the entry's own (the context-1m beta) and the client's betas
    // count against the same context window.
    return Promise.resolve({
      url: `${trimSlash(target.upstream.baseURL)}/v1/messages/count_tokens`,
      headers: upstreamHeaders(target, clientHeaders),
      body: JSON.stringify(rest),
    });
  },
  readCount: (json) => {
    const n = Number((json as { input_tokens?: unknown }).input_tokens); // vendor JSON: the field is checked below
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  },
  preparePassthrough() {},
  replyUsage: (json) => messagesUsageFields(json.usage),
  streamModel: (data) => namedModel(data)?.name,
  replyModel: (json) => (typeof json.model === "string" ? json.model : undefined),
  passthrough,
  // No embeddings call in this protocol.
  embeddings: undefined,
  batches: messagesBatches,
  readsClientBetas: true,
  continueBy: "prefill",
  readBack: { errorMarks: ["event: error\n"] },
  // Priority is sold by commitment: `auto` lets a request use it, `standard_only` keeps it at the
  // standard tier; there is no flex.
  serviceTier: (body, tier) => tier === "priority" && putField(body, "service_tier", "auto"),
  parameters: ["max_tokens", "temperature", "top_p", "top_k", "stop", "tools", "tool_choice", "reasoning"],
};
