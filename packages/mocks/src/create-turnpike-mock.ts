/**
 * `createTurnpikeMock()`: msw 2 handlers that answer like a Turnpike gateway — `/v1/models`,
 * `/v1/messages` (+ `count_tokens`), `/v1/chat/completions`, `/v1/responses` (+ the routes of
 * the responses it stored, and `input_tokens`) and `/v1/embeddings`, JSON and SSE, in exactly the gateway's shapes —
 * with replies you script per test and every request recorded; and `/v1/files`, `/v1/batches` and
 * `/v1/messages/batches`, whose lines are answered by those same routes (mock-batches.ts).
 */
import type { Model, ResponsesInputItem, ResponsesResponse } from "@turnpike/schema";
import { delay, getResponse, http, HttpResponse, type HttpHandler } from "msw";
import { captureRequest } from "./capture-request.js";
import type { CapturedRequest, MockEndpoint, MockRequestBodies } from "./captured-request.js";
import { withCut } from "./cut-reply.js";
import { DEFAULT_MODEL_IDS, mockModel } from "./default-models.js";
import { estimateTokens } from "./estimate-tokens.js";
import { MockBatches } from "./mock-batches.js";
import type { MockError, MockReply } from "./mock-reply.js";
import { errorResponse, idHeaders, isMessagesCaller, json, type ResponseIds } from "./mock-responses.js";
import { renderChatFrames, renderChatResponse } from "./render-chat.js";
import { renderGenerateError, renderGenerateFrames, renderGenerateResponse } from "./render-generate.js";
import { renderEmbeddings } from "./render-embeddings.js";
import { renderMessagesFrames, renderMessagesResponse } from "./render-messages.js";
import { inputItemsOf, renderResponsesFrames, renderResponsesResponse, replayItem } from "./render-responses.js";
import { sseResponse } from "./sse-response.js";

/** A reply, or a function of the request that returns one. */
export type ScriptedReply = MockReply | ((request: CapturedRequest) => MockReply | Promise<MockReply>);

/** Which requests a scripted reply is for, and how many. */
export interface ReplyOptions {
  /** Default: the four inference endpoints, `messages`, `chat`, `responses` and `generate`. */
  endpoint?: MockEndpoint | MockEndpoint[];
  /** How many requests it answers (default 1). */
  times?: number;
}

/**
 * Options of {@link createTurnpikeMock}.
 *
 * @example
 * ```ts
 * createTurnpikeMock({ baseURL: "http://localhost:8080", apiKey: "sk-test", models: ["beta-5"], latencyMs: 5 });
 * ```
 */
export interface TurnpikeMockOptions {
  /** Gateway origin to intercept, e.g. `http://localhost:8080`; default: any origin. */
  baseURL?: string;
  /** Keys the mock accepts; default: any non-empty key. A missing or other key gets a 401. */
  apiKey?: string | string[];
  /** The catalog (ids or full entries); default: the gateway's built-in model ids. */
  models?: Array<string | Model>;
  /** The reply when nothing is scripted (default: a short text reply). */
  defaultReply?: MockReply;
  /** Milliseconds before every answer (a reply's `delayMs` wins). */
  latencyMs?: number;
}

/**
 * The mock: pass `handlers` to `setupServer`, script replies, assert on `requests`.
 *
 * @example
 * ```ts
 * turnpike.reply({ text: "ok" }).fail(503);
 * expect(turnpike.requests).toHaveLength(2);
 * ```
 */
export interface TurnpikeMock {
  /** msw request handlers: `setupServer(...turnpike.handlers)`. */
  readonly handlers: HttpHandler[];
  /** Every request received, in order. */
  readonly requests: readonly CapturedRequest[];
  /** Answers the next matching request(s) with `reply`, then falls back to the default. */
  reply(reply: ScriptedReply, options?: ReplyOptions): TurnpikeMock;
  /** Answers every matching request with `reply` from now on (until `reset()`). */
  replyAlways(reply: ScriptedReply, options?: Omit<ReplyOptions, "times">): TurnpikeMock;
  /** Answers the next matching request(s) with an error in the caller's format. */
  fail(status: number, error?: Omit<MockError, "status">, options?: ReplyOptions): TurnpikeMock;
  /** The last request received. */
  lastRequest(): CapturedRequest | undefined;
  /** The valid bodies sent to one endpoint, typed by the schema. */
  bodies<E extends keyof MockRequestBodies>(endpoint: E): MockRequestBodies[E][];
  /** Replaces the catalog. */
  setModels(models: Array<string | Model>): TurnpikeMock;
  /** The responses `POST /v1/responses` stored (not `store: false`, not failed) and not deleted, by id. */
  readonly storedResponses: ReadonlyMap<string, ResponsesResponse>;
  /** Forgets scripted replies, recorded requests and stored responses, and restores the catalog. */
  reset(): void;
}

interface Script {
  reply: ScriptedReply;
  endpoints: ReadonlySet<MockEndpoint>;
  remaining: number;
}

const INFERENCE: MockEndpoint[] = ["messages", "chat", "responses", "generate"];

/** The generateContent format's endpoints: its errors are in its own envelope. */
const GENERATE: ReadonlySet<MockEndpoint> = new Set(["generate", "generate_count_tokens"]);

/** A stored response and the input items it was made from (the conversation it continued first). */
interface Stored {
  /** The key that created it: another key's request sees a 404, as at the gateway. */
  apiKey: string | undefined;
  response: ResponsesResponse;
  inputItems: ResponsesInputItem[];
}

/** The endpoints whose errors are always in the chat envelope, whatever headers the caller sent (the Responses format's). */
const CHAT_ENVELOPE_ONLY: ReadonlySet<MockEndpoint> = new Set(["responses", "response", "input_tokens", "embeddings"]);

/**
 * @example
 * ```ts
 * import { setupServer } from "msw/node";
 * import { createTurnpikeMock } from "@turnpike/mocks";
 *
 * const turnpike = createTurnpikeMock();
 * const server = setupServer(...turnpike.handlers);
 * server.listen({ onUnhandledRequest: "error" });
 *
 * turnpike.reply({ text: "Bonjour" });
 * // … call your code that uses @turnpike/messages or @turnpike/chat …
 * console.log(turnpike.lastRequest()?.model);
 * ```
 */
export function createTurnpikeMock(options: TurnpikeMockOptions = {}): TurnpikeMock {
  const origin = options.baseURL ? options.baseURL.replace(/\/+$/, "").replace(/\/v1$/, "") : "*";
  const keys = options.apiKey === undefined ? undefined : new Set([options.apiKey].flat());
  const initialModels = (options.models ?? [...DEFAULT_MODEL_IDS]).map(toModel);
  let models = initialModels;
  let queue: Script[] = [];
  let always: Script[] = [];
  const requests: CapturedRequest[] = [];
  const valid = new Map<CapturedRequest, unknown>();
  const stored = new Map<string, Stored>();
  const storedResponses = new Map<string, ResponsesResponse>();
  let counter = 0;

  const notFound = (id: string): MockError => ({
    status: 404,
    code: "not_found",
    param: "response_id",
    message: `Response with id '${id}' not found.`,
  });
  /** A stored response of the caller's key. */
  const storedFor = (id: string, captured: CapturedRequest): Stored | undefined => {
    const entry = stored.get(id);
    return entry?.apiKey === captured.apiKey ? entry : undefined;
  };
  /** The stored response a `response` route names in its path. */
  const storedOf = (request: Request, captured: CapturedRequest): { id: string; entry: Stored | undefined } => {
    const id = decodeURIComponent(
      new URL(request.url).pathname.replace(/^.*\/v1\/responses\//, "").replace(/\/input_items$/, ""),
    );
    return { id, entry: storedFor(id, captured) };
  };

  const scripted = (endpoint: MockEndpoint): ScriptedReply | undefined => {
    const i = queue.findIndex((s) => s.endpoints.has(endpoint));
    const hit = queue[i];
    if (hit) {
      hit.remaining -= 1;
      if (hit.remaining <= 0) queue.splice(i, 1);
      return hit.reply;
    }
    return always.find((s) => s.endpoints.has(endpoint))?.reply;
  };

  const capture = async (
    request: Request,
    endpoint: MockEndpoint,
    pathModel?: string,
    pathStream?: boolean,
  ): Promise<CapturedRequest> => {
    const { captured, valid: value } = await captureRequest(request, endpoint, pathModel, pathStream);
    if (value !== undefined) valid.set(captured, value);
    requests.push(captured);
    return captured;
  };

  const answer = async (
    request: Request,
    endpoint: MockEndpoint,
    render: (
      reply: MockReply,
      captured: CapturedRequest,
      ids: ResponseIds,
      fail: (error: MockError) => Response,
    ) => Response,
    pathModel?: string,
    pathStream?: boolean,
  ): Promise<Response> => {
    const captured = await capture(request, endpoint, pathModel, pathStream);
    const script = scripted(endpoint);
    const reply = withCut(
      (typeof script === "function" ? await script(captured) : script) ?? options.defaultReply ?? {},
    );
    const wait = reply.delayMs ?? options.latencyMs;
    if (wait) await delay(wait);
    if (reply.networkError) return HttpResponse.error();

    const messagesCaller = !CHAT_ENVELOPE_ONLY.has(endpoint) && isMessagesCaller(request.headers);
    const generate = GENERATE.has(endpoint) || new URL(request.url).pathname.startsWith("/v1beta/");
    const dialect = generate
      ? "generate"
      : endpoint === "messages" || endpoint === "count_tokens" || messagesCaller
        ? "messages"
        : "chat";
    const n = ++counter;
    const ids: ResponseIds = { n: String(n), requestId: `req_mock_${n}`, dialect };
    const fail = (error: MockError): Response => errorResponse(error, ids, reply.headers);
    if (!captured.apiKey)
      return fail({ status: 401, message: "Missing API key: send x-api-key or Authorization: Bearer." });
    if (keys && !keys.has(captured.apiKey)) return fail({ status: 401, message: "Invalid API key." });
    if (captured.issues.length > 0) return fail({ status: 400, message: captured.issues.join("; ") });
    if (captured.model !== undefined && !models.some((m) => m.id === captured.model)) {
      const message = `The model \`${captured.model}\` does not exist or this key may not call it (model_not_found).`;
      return fail({ status: 404, message, code: "model_not_found" });
    }
    // As the gateway: an embedding model serves /v1/embeddings only, and only an embedding model does.
    const kind =
      captured.model === undefined ? undefined : models.find((m) => m.id === captured.model)?.embeds === true;
    if (kind === true && INFERENCE.includes(endpoint)) {
      return fail({
        status: 400,
        param: "model",
        code: "model_not_supported",
        message: `The model \`${captured.model}\` is an embedding model: it serves POST /v1/embeddings only, not this route.`,
      });
    }
    if (kind === false && endpoint === "embeddings") {
      return fail({
        status: 400,
        param: "model",
        code: "model_not_supported",
        message: `The model \`${captured.model}\` is not an embedding model: POST /v1/embeddings takes an embedding model (GET /v1/models marks them with \`embeds: true\`).`,
      });
    }
    if (reply.error) return fail(reply.error);
    return render(reply, captured, ids, fail);
  };

  const url = (path: string): string => `${origin}${path}`;
  /** `POST /{version}/models/{model}:{action}`, the generateContent format's three actions. */
  const generateAction = ({ request }: { request: Request }): Promise<Response> | Response => {
    const path = decodeURIComponent(new URL(request.url).pathname.replace(/^.*?\/models\//, ""));
    const colon = path.lastIndexOf(":");
    const model = path.slice(0, colon).replace(/^models\//, "");
    const action = path.slice(colon + 1);
    if (action === "countTokens") {
      return answer(
        request,
        "generate_count_tokens",
        (reply, captured, ids) => {
          // Validated above: `answer` returned a 400 for any body whose prompt is not a GenerateRequest.
          const body = valid.get(captured) as MockRequestBodies["generate_count_tokens"];
          const estimate = estimateTokens(JSON.stringify(body.contents) + JSON.stringify(body.systemInstruction ?? ""));
          return json({ totalTokens: reply.usage?.input_tokens ?? estimate }, ids, reply);
        },
        model,
      );
    }
    if (action !== "generateContent" && action !== "streamGenerateContent") {
      const { status, body } = renderGenerateError({ status: 404, message: `Unknown action ":${action}".` });
      return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    }
    const stream = action === "streamGenerateContent";
    return answer(
      request,
      "generate",
      (reply, captured, ids) => {
        // Validated above: `answer` returned a 400 for any body that is not a GenerateRequest.
        const body = valid.get(captured) as MockRequestBodies["generate"];
        const response = renderGenerateResponse(reply, body, ids.n, model);
        if (!stream) return json(response, ids, reply);
        const sse = new URL(request.url).searchParams.get("alt") === "sse";
        const headers = { ...idHeaders(ids), ...(sse ? {} : { "content-type": "application/json" }), ...reply.headers };
        return sseResponse(renderGenerateFrames(reply, response, sse), { ...reply, headers });
      },
      model,
      stream,
    );
  };
  /** A catalog entry as the generateContent format lists a model. */
  const generateModel = (m: Model) => ({
    name: `models/${m.id}`,
    baseModelId: m.id,
    version: m.created_at.slice(0, 10),
    displayName: m.display_name,
    inputTokenLimit: m.context_window ?? 200_000,
    outputTokenLimit: 64_000,
    supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
  });
  /** A files or batches call: recorded (its body unread), its key checked; then the key and a way to refuse. */
  const admit = async (
    request: Request,
    endpoint: "files" | "batches" | "message_batches",
  ): Promise<{ apiKey: string; fail: (e: MockError) => Response } | Response> => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    const apiKey =
      request.headers.get("x-api-key") ?? request.headers.get("authorization")?.replace(/^Bearer\s+/i, "") ?? undefined;
    requests.push({
      endpoint,
      method: request.method,
      url: request.url,
      headers,
      body: undefined,
      apiKey,
      model: undefined,
      stream: false,
      issues: [],
    });
    const n = ++counter;
    const ids: ResponseIds = {
      n: String(n),
      requestId: `req_mock_${n}`,
      dialect: endpoint === "message_batches" ? "messages" : "chat",
    };
    const fail = (error: MockError): Response => errorResponse(error, ids, undefined);
    if (!apiKey) return fail({ status: 401, message: "Missing API key: send x-api-key or Authorization: Bearer." });
    if (keys && !keys.has(apiKey)) return fail({ status: 401, message: "Invalid API key." });
    return { apiKey, fail };
  };
  const batches = new MockBatches({
    url: (path) => url(path),
    admit,
    // A batch line goes through the mock's own route for it, in this process.
    call: async (request) =>
      (await getResponse(handlers, request)) ?? new Response(null, { status: 404, statusText: "no mock route" }),
  });
  const handlers: HttpHandler[] = [
    ...batches.handlers(),
    http.get(url("/v1beta/models"), ({ request }) =>
      answer(request, "models", (reply, _c, ids) => json({ models: models.map(generateModel) }, ids, reply)),
    ),
    http.get(url("/v1beta/models/*"), ({ request }) => {
      const id = decodeURIComponent(new URL(request.url).pathname.replace(/^.*\/v1beta\/models\//, "")).replace(
        /^models\//,
        "",
      );
      const found = models.find((m) => m.id === id);
      return answer(
        request,
        "model",
        (reply, _c, ids) => json(found ? generateModel(found) : undefined, ids, reply),
        id,
      );
    }),
    http.post(url("/v1beta/models/*"), generateAction),
    http.post(url("/v1/models/*"), generateAction),
    http.get(url("/v1/models"), ({ request }) =>
      answer(request, "models", (reply, _c, ids) =>
        json(
          {
            object: "list",
            data: models,
            has_more: false,
            first_id: models[0]?.id ?? null,
            last_id: models.at(-1)?.id ?? null,
          },
          ids,
          reply,
        ),
      ),
    ),
    http.get(url("/v1/models/*"), ({ request }) => {
      const id = decodeURIComponent(new URL(request.url).pathname.replace(/^.*\/v1\/models\//, ""));
      return answer(
        request,
        "model",
        (reply, _c, ids) =>
          json(
            models.find((m) => m.id === id),
            ids,
            reply,
          ),
        id,
      );
    }),
    http.post(url("/v1/messages/count_tokens"), ({ request }) =>
      answer(request, "count_tokens", (reply, captured, ids) => {
        // Validated above: `answer` returned a 400 for any body that is not a CountTokensRequest.
        const body = valid.get(captured) as MockRequestBodies["count_tokens"];
        const estimate = estimateTokens(
          JSON.stringify(body.messages) + JSON.stringify(body.system ?? "") + JSON.stringify(body.tools ?? ""),
        );
        return json({ input_tokens: reply.usage?.input_tokens ?? estimate }, ids, reply);
      }),
    ),
    http.post(url("/v1/messages"), ({ request }) =>
      answer(request, "messages", (reply, captured, ids) => {
        // Validated above: `answer` returned a 400 for any body that is not a MessagesRequest.
        const body = valid.get(captured) as MockRequestBodies["messages"];
        const response = renderMessagesResponse(reply, body, ids.n);
        if (!captured.stream) return json(response, ids, reply);
        return sseResponse(renderMessagesFrames(reply, response), {
          ...reply,
          headers: { ...idHeaders(ids), ...reply.headers },
        });
      }),
    ),
    http.post(url("/v1/chat/completions"), ({ request }) =>
      answer(request, "chat", (reply, captured, ids) => {
        // Validated above: `answer` returned a 400 for any body that is not a ChatRequest.
        const body = valid.get(captured) as MockRequestBodies["chat"];
        const response = renderChatResponse(reply, body, ids.n, Math.floor(Date.now() / 1000));
        if (!captured.stream) return json(response, ids, reply);
        return sseResponse(renderChatFrames(reply, body, response), {
          ...reply,
          headers: { ...idHeaders(ids), ...reply.headers },
        });
      }),
    ),
    http.post(url("/v1/embeddings"), ({ request }) =>
      answer(request, "embeddings", (reply, captured, ids, fail) => {
        // Validated above: `answer` returned a 400 for any body that is not an EmbeddingsRequest.
        const body = valid.get(captured) as MockRequestBodies["embeddings"];
        const size = models.find((m) => m.id === body.model)?.embedding_dimensions ?? 1536;
        if (body.dimensions !== undefined && body.dimensions > size) {
          return fail({
            status: 400,
            param: "dimensions",
            message: `\`dimensions\` is ${body.dimensions}, but \`${body.model}\` makes vectors of at most ${size}.`,
          });
        }
        return json(renderEmbeddings(body, size), ids, reply);
      }),
    ),
    http.post(url("/v1/responses/input_tokens"), ({ request }) =>
      answer(request, "input_tokens", (reply, captured, ids) => {
        // Validated above: `answer` returned a 400 for any body that is not a ResponsesRequest.
        const body = valid.get(captured) as MockRequestBodies["input_tokens"];
        const estimate = estimateTokens(
          JSON.stringify(body.input) + (body.instructions ?? "") + JSON.stringify(body.tools ?? ""),
        );
        return json(
          { object: "response.input_tokens", input_tokens: reply.usage?.input_tokens ?? estimate },
          ids,
          reply,
        );
      }),
    ),
    http.post(url("/v1/responses"), ({ request }) =>
      answer(request, "responses", (reply, captured, ids, fail) => {
        // Validated above: `answer` returned a 400 for any body that is not a ResponsesRequest.
        const body = valid.get(captured) as MockRequestBodies["responses"];
        let earlier: ResponsesInputItem[] = [];
        if (body.previous_response_id) {
          const previous = storedFor(body.previous_response_id, captured);
          if (!previous) {
            const message = `Previous response with id '${body.previous_response_id}' not found.`;
            return fail({ status: 404, param: "previous_response_id", message });
          }
          earlier = [...previous.inputItems, ...previous.response.output.map(replayItem)];
        }
        const response = renderResponsesResponse(reply, body, ids.n, Math.floor(Date.now() / 1000));
        // As the gateway: kept unless `store: false`; a stream that failed in-band keeps nothing.
        if (body.store !== false && !(captured.stream && (reply.streamError || reply.cutAfter !== undefined))) {
          stored.set(response.id, {
            apiKey: captured.apiKey,
            response,
            inputItems: [...earlier, ...inputItemsOf(body)],
          });
          storedResponses.set(response.id, response);
        }
        if (!captured.stream) return json(response, ids, reply);
        return sseResponse(renderResponsesFrames(reply, response), {
          ...reply,
          headers: { ...idHeaders(ids), ...reply.headers },
        });
      }),
    ),
    http.get(url("/v1/responses/:id/input_items"), ({ request }) =>
      answer(request, "response", (reply, captured, ids, fail) => {
        const { id, entry } = storedOf(request, captured);
        if (!entry) return fail(notFound(id));
        const items = entry.inputItems.map((item, i) => ({
          id: `item_${String(i).padStart(4, "0")}`,
          ...("type" in item ? {} : { type: "message" }),
          ...item,
        }));
        // Newest first unless asked otherwise, as the gateway lists them.
        const data = new URL(request.url).searchParams.get("order") === "asc" ? items : items.reverse();
        return json(
          { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false },
          ids,
          reply,
        );
      }),
    ),
    http.get(url("/v1/responses/:id"), ({ request }) =>
      answer(request, "response", (reply, captured, ids, fail) => {
        const { id, entry } = storedOf(request, captured);
        return entry ? json(entry.response, ids, reply) : fail(notFound(id));
      }),
    ),
    http.delete(url("/v1/responses/:id"), ({ request }) =>
      answer(request, "response", (reply, captured, ids, fail) => {
        const { id, entry } = storedOf(request, captured);
        if (!entry) return fail(notFound(id));
        stored.delete(id);
        storedResponses.delete(id);
        return json({ id, object: "response", deleted: true }, ids, reply);
      }),
    ),
  ];

  const mock: TurnpikeMock = {
    handlers,
    requests,
    storedResponses,
    reply(reply, opts = {}) {
      if (typeof reply !== "function") withCut(reply); // a bad cut is the test author's error at once
      queue.push({ reply, endpoints: new Set([opts.endpoint ?? INFERENCE].flat()), remaining: opts.times ?? 1 });
      return mock;
    },
    replyAlways(reply, opts = {}) {
      if (typeof reply !== "function") withCut(reply);
      always.unshift({ reply, endpoints: new Set([opts.endpoint ?? INFERENCE].flat()), remaining: Infinity });
      return mock;
    },
    fail(status, error = {}, opts = {}) {
      return mock.reply({ error: { ...error, status } }, opts);
    },
    lastRequest: () => requests.at(-1),
    bodies<E extends keyof MockRequestBodies>(endpoint: E): MockRequestBodies[E][] {
      // `valid` holds the value each endpoint's validator accepted, so it has that endpoint's type.
      return requests
        .filter((r) => r.endpoint === endpoint && valid.has(r))
        .map((r) => valid.get(r) as MockRequestBodies[E]);
    },
    setModels(next) {
      models = next.map(toModel);
      return mock;
    },
    reset() {
      queue = [];
      always = [];
      requests.length = 0;
      valid.clear();
      stored.clear();
      storedResponses.clear();
      batches.reset();
      models = initialModels;
    },
  };
  return mock;
}

function toModel(m: string | Model): Model {
  return typeof m === "string" ? mockModel(m) : m;
}
