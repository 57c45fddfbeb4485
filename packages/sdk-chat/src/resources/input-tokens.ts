/** `client.responses.inputTokens`: how many input tokens a request would use. */
import type { ResponsesInputTokens } from "@turnpike/schema";
import type { APIClient, APIPromise, RequestOptions } from "@turnpike/sdk-core";
import type { ResponseInputTokensParams } from "../responses-types.js";

/**
 * `client.responses.inputTokens`.
 *
 * @example
 * ```ts
 * const { input_tokens } = await client.responses.inputTokens.count({ model: "beta-5", input: "Hello" });
 * ```
 */
export class InputTokens {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /**
   * Counts the input tokens of a request (instructions, input, tools) for its model, without
   * running it: the upstream's own count where its vendor has one, else the gateway's estimate.
   *
   * @example
   * ```ts
   * const { input_tokens } = await client.responses.inputTokens.count({ model: "beta-5", instructions: "Be brief.", input: "Hello" });
   * ```
   */
  count(body: ResponseInputTokensParams, options?: RequestOptions): APIPromise<ResponsesInputTokens> {
    return this.#client.request<ResponsesInputTokens>({
      ...options,
      method: "POST",
      path: "/responses/input_tokens",
      body,
      model: body.model,
    });
  }
}
