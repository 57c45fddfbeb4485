import {
  GatewayError,
  MessagesToGenerateMachine,
  convertGenerateRequestToMessages,
  convertMessagesResponseToGenerate,
  renderGenerateError,
} from "@turnpike/providers";
import { validateGenerateRequest, type GenerateModel, type GenerateRequest } from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";
import { chatLimitHeaders } from "./rate-limit-headers";
import { invalid, validationError } from "../vocabulary/client-errors";
import type { CatalogEntry } from "../vocabulary/target";
import { DEFAULT_MAX_TOKENS } from "./chat";
import type { ClientFormat, ClientRequest } from "./client-format";

/**
 * How a call asks for its reply: `json` (`:generateContent`), `sse` (`:streamGenerateContent?alt=sse`,
 * what the SDKs and Gemini CLI use), or `array` (`:streamGenerateContent` without `alt`: the
 * chunks written as the elements of one JSON array, as they come).
 */
export type GenerateMode = "json" | "sse" | "array";

/** A model as the format names it (`models/gamma-3-pro`) or as the catalog does. */
export function catalogIdOf(name: string): string {
  return name.startsWith("models/") ? name.slice("models/".length) : name;
}

const sseFrame = (json: string) => formatSSE({ data: json });
const errorJson = (message: string) =>
  JSON.stringify(renderGenerateError(new GatewayError({ status: 500, type: "api_error", message })));

/** The framing of one stream: SSE frames, or the elements of a JSON array opened by the first. */
interface Framing {
  frame(json: string): string;
  /** What closes the stream after its last chunk. */
  close(): string;
  inBandError(message: string): string;
}

function framingOf(mode: GenerateMode): Framing {
  if (mode !== "array") return { frame: sseFrame, close: () => "", inBandError: (m) => sseFrame(errorJson(m)) };
  // The array is opened by its first element; an error ends it as its last.
  let opened = false;
  const frame = (json: string) => {
    const out = `${opened ? ",\r\n" : "["}${json}`;
    opened = true;
    return out;
  };
  return { frame, close: () => (opened ? "]" : "[]"), inBandError: (m) => `${frame(errorJson(m))}]` };
}

/** A validated request of this format for the model `model` (from the path). */
function generateClient(
  request: GenerateRequest,
  body: Readonly<Record<string, unknown>>,
  model: string,
  mode: GenerateMode,
  framing: Framing,
): ClientRequest {
  const stream = mode !== "json";
  return {
    model,
    stream,
    body,
    // Every chunk of the format carries usage: the client never has to ask.
    includeUsage: true,
    toPivot: (target) =>
      convertGenerateRequestToMessages(request, { model, defaultMaxTokens: DEFAULT_MAX_TOKENS, target, stream }),
    encodeReply: (reply, id) => convertMessagesResponseToGenerate(reply, { model: id }),
    encoder(id, write) {
      const machine = new MessagesToGenerateMachine({ model: id, frame: (json) => write(framing.frame(json)) });
      return {
        push: (ev) => machine.push(ev),
        resume(events) {
          machine.resume(events);
          return { textOpen: true };
        },
        end() {
          machine.end();
          const close = framing.close();
          if (close) write(close);
        },
      };
    },
    inBandError: framing.inBandError,
  };
}

/** Validates a body of this format, the model taken from the path (or, failing that, the body). */
function validateFor(
  body: Record<string, unknown>,
  model: string | undefined,
  mode: GenerateMode,
  framing: Framing,
): ClientRequest {
  const checked = validateGenerateRequest(body);
  if (!checked.ok) throw validationError(checked.issues);
  const named = model ?? (typeof body.model === "string" ? catalogIdOf(body.model) : undefined);
  if (!named) throw invalid("model: the path names the model, as /v1beta/models/{model}:generateContent", "model");
  return generateClient(checked.value, body, named, mode, framing);
}

/** A catalog entry as the format lists a model (`models/{id}`, its token limits, its methods). */
function generateModel(e: CatalogEntry): GenerateModel {
  return {
    name: `models/${e.id}`,
    baseModelId: e.id,
    version: e.created_at.slice(0, 10),
    displayName: e.display_name,
    description: `${e.display_name}, served by Turnpike`,
    inputTokenLimit: e.context_window,
    outputTokenLimit: e.max_output_tokens,
    supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
    // Every upstream's reasoning is asked through this format's thinkingConfig.
    thinking: true,
  };
}

/** The format's models list (`{models}`, catalog order) and model. */
export const generateModels = {
  // Embedding models are called at `POST /v1/embeddings`, not through this format's actions: not listed.
  list: (entries: readonly CatalogEntry[]) => ({
    models: entries.filter((e) => e.embedding_dimensions === undefined).map(generateModel),
  }),
  one: generateModel,
};

/**
 * A quiet SSE stream's keep-alive: one blank line, not a comment. Gemini CLI 0.61 reads its stream
 * through a GenAI SDK (1.30) that matches each event with `^\s*data: ` from the start of its
 * buffer: a `: keep-alive` comment there would never match, and every later chunk would wait
 * behind it. A blank line is whitespace to that reader and an empty event to every SSE parser.
 */
const KEEP_ALIVE = new TextEncoder().encode("\n");

/**
 * The generateContent format (`POST /v1beta/models/{model}:generateContent`, Gemini CLI and the
 * GenAI SDKs), docs/protocols.md §6. The model and the kind of reply are in the path, so each call
 * gets its own copy of the adapter ({@link generateFormatFor}); this one is the registry's, for
 * what does not depend on the call (errors, headers, unknown routes under `/v1beta/`).
 */
export const generateFormat: ClientFormat = {
  id: "generate",
  endpoint: "generate",
  pathPrefix: "/v1beta/",
  passthroughProtocol: "generate",
  inputAtStart: false,
  claims: (headers) => headers.has("x-goog-api-key"),
  validate: (body) => validateFor(body, undefined, "sse", framingOf("sse")),
  inBandError: (message) => sseFrame(errorJson(message)),
  // The format has no terminator: a stream ends after the chunk that says how the reply finished.
  terminalFrame: "",
  isTerminal: (piece) => piece.startsWith('data: {"error":') || piece.includes('\n\ndata: {"error":'),
  keepAlive: KEEP_ALIVE,
  renderError: (err) => {
    const body = renderGenerateError(err);
    return { status: body.error.code, body };
  },
  idHeaders: (requestId) => ({ "x-request-id": requestId }),
  limitHeaders: chatLimitHeaders,
  models: generateModels,
};

/**
 * The adapter of one call: its model and reply kind from the path. A JSON-array stream is never
 * passed through (an upstream streams SSE): it is written from the pivot, chunk by chunk.
 */
export function generateFormatFor(model: string, mode: GenerateMode): ClientFormat {
  const framing = framingOf(mode);
  const array = mode === "array";
  return {
    ...generateFormat,
    passthroughProtocol: array ? undefined : "generate",
    validate: (body) => validateFor(body, model, mode, framing),
    inBandError: framing.inBandError,
    isTerminal: array ? (piece) => piece.endsWith("]") : generateFormat.isTerminal,
    // An array stream cannot take an SSE comment between its elements; whitespace is valid JSON there.
    keepAlive: array ? new TextEncoder().encode("\r\n") : KEEP_ALIVE,
  };
}
