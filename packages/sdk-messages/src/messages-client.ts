/** The client of the messages format: `new MessagesClient()`, then `client.messages.create(…)`. */
import { APIClient, Models, resolveCredentials, type ClientOptions } from "@turnpike/sdk-core";
import { Messages } from "./resources/messages.js";

/** The format version this client speaks, sent as `alpha-version` (docs/protocols.md §1.1). */
export const MESSAGES_API_VERSION = "2023-06-01";

/** Options of {@link MessagesClient}; every field is optional. */
export type MessagesClientOptions = ClientOptions;

/**
 * A typed client for Turnpike's messages-format endpoint. Calls go to `{baseURL}/v1/messages`;
 * the key is sent as `x-api-key`.
 *
 * @example
 * ```ts
 * import MessagesClient from "@turnpike/messages";
 *
 * const client = new MessagesClient({ apiKey: process.env.TURNPIKE_API_KEY, baseURL: "http://localhost:8080" });
 * const message = await client.messages.create({
 *   model: "alpha-sonnet-4-6",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Hello, Turnpike" }],
 * });
 * console.log(message.content[0]);
 * ```
 */
export class MessagesClient extends APIClient {
  /** `create`, `stream`, `countTokens`. */
  readonly messages: Messages;
  /** `list`, `retrieve`, `validate`. */
  readonly models: Models;

  /**
   * @param options `apiKey` defaults to `TURNPIKE_API_KEY`, `baseURL` to `TURNPIKE_BASE_URL`
   *   (then `http://localhost:8080`); a base ending in `/v1` is accepted too.
   */
  constructor(options: MessagesClientOptions = {}) {
    const { apiKey, origin } = resolveCredentials(options, "MessagesClient");
    super({ ...options, apiKey, baseURL: origin });
    this.messages = new Messages(this);
    this.models = new Models(this, "/v1/models");
  }

  protected authHeaders(): Record<string, string> {
    return { "x-api-key": this.apiKey, "alpha-version": MESSAGES_API_VERSION };
  }
}
