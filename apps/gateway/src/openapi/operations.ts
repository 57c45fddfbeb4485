/**
 * Helpers that write the operations of the description document (docs/operations.md, "API
 * description"); each route states its own operation where it is declared (`Route.doc`).
 */

export type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Json) => ({ "application/json": { schema } });

export const INFERENCE_KEYS = [{ apiKey: [] }, { bearer: [] }];
export const ADMIN = [{ admin: [] }];

/** The request id every reply carries (quote it when reporting a problem). */
export const REQUEST_ID = { "x-request-id": { description: "This request's id, also in the usage record and the log line.", schema: { type: "string" } } };

/** Error replies of one wire format, by status class. */
export function errors(errorBody: string): Json {
  const reply = (description: string) => ({ description, headers: REQUEST_ID, content: json(ref(errorBody)) });
  return { "4XX": reply("Refused: a bad request, a bad key, a limit reached, an unknown model."), "5XX": reply("The upstream failed or could not be reached.") };
}

/** A JSON body whose `model` is one of the live catalog's ids. */
export const withModel = (schema: string): Json => ({ allOf: [ref(schema), { type: "object", properties: { model: ref("ModelId") } }] });

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
  return { tags: [tag], summary, security: INFERENCE_KEYS, requestBody: { required: true, content: json(withModel(request)) }, responses: { 200: { description: "The prompt's input tokens.", headers: REQUEST_ID, content: json(ref(reply)) }, ...errors(errorBody) } };
}

export const idParam = (description: string) => ({ name: "id", in: "path", required: true, description, schema: { type: "string" } });
export const query = (name: string, description: string, schema: Json) => ({ name, in: "query", required: false, description, schema });

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
