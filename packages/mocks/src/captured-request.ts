/** What the mock records about each request it answers, for assertions. */
import type {
  ChatRequest,
  CountTokensRequest,
  EmbeddingsRequest,
  GenerateRequest,
  MessagesRequest,
  ResponsesRequest,
} from "@turnpike/schema";

/**
 * The endpoints the mock serves: `responses` is `POST /v1/responses`, `response` the routes of
 * one stored response (`GET`/`DELETE /v1/responses/{id}`, `GET …/input_items`), `input_tokens`
 * `POST /v1/responses/input_tokens`; `generate` is `POST /v1beta/models/{model}:generateContent` (and
 * `:streamGenerateContent`, also under `/v1/`), `generate_count_tokens` its `:countTokens`; `embeddings`
 * `POST /v1/embeddings`; `files`, `batches` and `message_batches` the routes of `/v1/files`,
 * `/v1/batches` and `/v1/messages/batches` (recorded without their bodies; each batch line is
 * recorded under its own endpoint, `chat`, `responses`, `embeddings` or `messages`).
 */
export type MockEndpoint =
  | "messages"
  | "chat"
  | "responses"
  | "generate"
  | "count_tokens"
  | "input_tokens"
  | "generate_count_tokens"
  | "models"
  | "model"
  | "response"
  | "embeddings"
  | "files"
  | "batches"
  | "message_batches";

/** Request bodies by endpoint, as the schema types them. */
export interface MockRequestBodies {
  messages: MessagesRequest;
  chat: ChatRequest;
  count_tokens: CountTokensRequest;
  responses: ResponsesRequest;
  input_tokens: ResponsesRequest;
  generate: GenerateRequest;
  /** The prompt a count request names (its `generateContentRequest`, or the body itself). */
  generate_count_tokens: GenerateRequest;
  embeddings: EmbeddingsRequest;
}

/**
 * One request the mock received.
 *
 * @example
 * ```ts
 * const req = turnpike.requests[0];
 * expect(req?.endpoint).toBe("messages");
 * expect(req?.apiKey).toBe("sk-test");
 * ```
 */
export interface CapturedRequest {
  endpoint: MockEndpoint;
  method: string;
  url: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body (`undefined` for GET); use `turnpike.bodies(endpoint)` for typed bodies. */
  body: unknown;
  /** The key from `x-api-key`, `x-goog-api-key`, `?key=` or `Authorization: Bearer`. */
  apiKey: string | undefined;
  /** `body.model` or the model in the path (for the `response` routes: undefined). */
  model: string | undefined;
  stream: boolean;
  /** Validation problems when the body broke its format's rules (the mock answered 400). */
  issues: string[];
}
