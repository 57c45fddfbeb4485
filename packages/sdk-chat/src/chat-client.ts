/**
 * The client of the chat completions format: `new ChatClient()`, then `client.chat.completions.create(…)`;
 * also of the Responses format, `client.responses.create(…)`.
 */
import { APIClient, Models, resolveCredentials, type ClientOptions } from "@turnpike/sdk-core";
import { Batches } from "./resources/batches.js";
import { Chat } from "./resources/chat.js";
import { EmbeddingsResource } from "./resources/embeddings.js";
import { Files } from "./resources/files.js";
import { Responses } from "./resources/responses.js";

/** Options of {@link ChatClient}; every field is optional. */
export type ChatClientOptions = ClientOptions;

/**
 * A typed client for Turnpike's chat-completions endpoint. Give it the gateway origin
 * (`http://localhost:8080`) or a base that already ends in `/v1`; calls go to
 * `{origin}/v1/chat/completions` (and `{origin}/v1/responses`) with the key as
 * `Authorization: Bearer`.
 *
 * @example
 * ```ts
 * import ChatClient from "@turnpike/chat";
 *
 * const client = new ChatClient({ apiKey: process.env.TURNPIKE_API_KEY, baseURL: "http://localhost:8080" });
 * const completion = await client.chat.completions.create({
 *   model: "beta-5",
 *   messages: [{ role: "user", content: "Hello, Turnpike" }],
 * });
 * console.log(completion.choices[0]?.message.content);
 * ```
 */
export class ChatClient extends APIClient {
  /** `chat.completions.create`, `chat.completions.stream`. */
  readonly chat: Chat;
  /** `create`, `stream`, `retrieve`, `delete`, `inputItems.list`, `inputTokens.count` (the Responses format). */
  readonly responses: Responses;
  /** `list`, `retrieve`, `validate`. */
  readonly models: Models;
  /** `create`: vectors from an embedding model. */
  readonly embeddings: EmbeddingsResource;
  /** `create`, `retrieve`, `content`: the JSONL files of batches. */
  readonly files: Files;
  /** `create`, `retrieve`, `list`, `cancel`: requests run offline from an uploaded file. */
  readonly batches: Batches;

  /**
   * @param options `apiKey` defaults to `TURNPIKE_API_KEY`, `baseURL` to `TURNPIKE_BASE_URL`
   *   (then `http://localhost:8080`).
   */
  constructor(options: ChatClientOptions = {}) {
    const { apiKey, origin } = resolveCredentials(options, "ChatClient");
    super({ ...options, apiKey, baseURL: `${origin}/v1` });
    this.chat = new Chat(this);
    this.responses = new Responses(this);
    this.models = new Models(this, "/models");
    this.embeddings = new EmbeddingsResource(this);
    this.files = new Files(this);
    this.batches = new Batches(this);
  }

  protected authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}` };
  }
}
