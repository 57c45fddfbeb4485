/**
 * Helpers that write the operations of the description document (docs/operations.md, "API
 * description"); each route states its own operation where it is declared (`Route.doc`).
 */

import { GatewayError } from "@turnpike/providers";
import { FORMATS, type Format } from "../formats";
import { unauthorized } from "../access/authenticate";
import { invalid } from "../vocabulary/client-errors";

export type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Json) => ({ "application/json": { schema } });

export const INFERENCE_KEYS = [{ apiKey: [] }, { bearer: [] }];
export const ADMIN = [{ admin: [] }];

/** The request id every reply carries (quote it when reporting a problem). */
export const REQUEST_ID = {
  "x-request-id": {
    description:
      "This request's id, also in the usage record and the log line; or the caller's own `x-request-id` when it sent a well-formed one (1 to 128 of A–Z, a–z, 0–9, `-`, `_`, `.`, `:`), Turnpike's id then in `x-turnpike-request-id`.",
    schema: { type: "string" },
  },
};

/** The format whose error envelope each error schema is. */
const ENVELOPE: Record<string, Format> = { ChatErrorBody: "chat", MessagesErrorBody: "messages" };

/** Refusals the gateway makes, as the examples of each status class. */
const EXAMPLE_ERRORS = {
  "4XX": {
    invalid: invalid("temperature: must be between 0 and 2, got 3", "temperature"),
    unauthorized: unauthorized("Invalid API key: it is not a Turnpike key."),
  },
  "5XX": {
    unreachable: new GatewayError({ status: 502, message: "Could not reach the openai upstream: connection refused" }),
  },
} as const;

/**
 * Examples of one error envelope: each refusal as the format's own renderer writes it (the very
 * code that answers a client), so an example cannot drift from a real reply.
 */
function errorExamples(errorBody: string, status: keyof typeof EXAMPLE_ERRORS): Json | undefined {
  const format = ENVELOPE[errorBody];
  if (format === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(EXAMPLE_ERRORS[status]).map(([name, err]) => [
      name,
      { summary: `${err.status} ${err.type}`, value: FORMATS[format].renderError(err, "req_0123456789abcdef").body },
    ]),
  );
}

/** Error replies of one wire format, by status class, with examples of its envelope. */
export function errors(errorBody: string): Json {
  const reply = (description: string, status: keyof typeof EXAMPLE_ERRORS) => {
    const examples = errorExamples(errorBody, status);
    return {
      description,
      headers: REQUEST_ID,
      content: { "application/json": { schema: ref(errorBody), ...(examples ? { examples } : {}) } },
    };
  };
  return {
    "4XX": reply("Refused: a bad request, a bad key, a limit reached, an unknown model.", "4XX"),
    "5XX": reply("The upstream failed or could not be reached.", "5XX"),
  };
}

/**
 * An operation's `operationId`, derived from its method and path: the method, then each literal
 * segment of the path in PascalCase (`v1` left out), then each parameter as `By<Name>`
 * (`GET /v1/responses/{id}/input_items` → `getResponsesByIdInputItems`). Stable as long as the
 * route is, and unique because method and path are (the document checks).
 */
export function operationIdOf(method: string, path: string): string {
  const pascal = (word: string) =>
    word
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join("");
  const parts = path
    .split("/")
    .filter((seg) => seg !== "" && seg !== "v1")
    .map((seg) => {
      const param = /^\{(\w+)\}$/.exec(seg)?.[1];
      return param ? `By${pascal(param)}` : pascal(seg);
    });
  return method.toLowerCase() + parts.join("");
}

/** A JSON body whose `model` is one of the live catalog's ids. */
export const withModel = (schema: string): Json => ({
  allOf: [ref(schema), { type: "object", properties: { model: ref("ModelId") } }],
});

export interface InferenceRoute {
  summary: string;
  request: string;
  reply: string;
  /** What each `data:` line of the stream holds. */
  event: string;
  /** How the stream ends. */
  streamEnd: string;
  errorBody: string;
  tag: string;
}

/** The operation of an inference route (`POST`): JSON or a stream, errors in the format's envelope. */
export function inference(r: InferenceRoute): Json {
  return {
    tags: [r.tag],
    summary: r.summary,
    security: INFERENCE_KEYS,
    requestBody: { required: true, content: json(withModel(r.request)) },
    responses: {
      200: {
        description: `A reply (JSON), or with \`stream: true\` a server-sent event stream: each event's \`data:\` line is one JSON object of the schema given; ${r.streamEnd}`,
        headers: REQUEST_ID,
        content: { ...json(ref(r.reply)), "text/event-stream": { schema: ref(r.event) } },
      },
      ...errors(r.errorBody),
    },
  };
}

/** The operation of a token-count route (`POST`). */
export function count(summary: string, request: string, reply: string, errorBody: string, tag: string): Json {
  return {
    tags: [tag],
    summary,
    security: INFERENCE_KEYS,
    requestBody: { required: true, content: json(withModel(request)) },
    responses: {
      200: { description: "The prompt's input tokens.", headers: REQUEST_ID, content: json(ref(reply)) },
      ...errors(errorBody),
    },
  };
}

export const idParam = (description: string) => ({
  name: "id",
  in: "path",
  required: true,
  description,
  schema: { type: "string" },
});
export const query = (name: string, description: string, schema: Json) => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
});

export function ok(description: string, schema: Json): Json {
  return { 200: { description, content: json(schema) } };
}

/** An HTML page's replies. */
export function html(description: string): Json {
  return { 200: { description, content: { "text/html": { schema: { type: "string" } } } } };
}

export function admin(summary: string, replies: Json, extra: Json = {}): Json {
  return { tags: ["Admin"], summary, security: ADMIN, ...extra, responses: { ...replies, ...errors("ChatErrorBody") } };
}
