/** `client.chat`: the namespace of `client.chat.completions`, as in the official client. */
import type { APIClient } from "@turnpike/sdk-core";
import { Completions } from "./completions.js";

/**
 * `client.chat`.
 *
 * @example
 * ```ts
 * const stream = client.chat.completions.stream({ model: "beta-5", messages });
 * ```
 */
export class Chat {
  /** `create` and `stream`. */
  readonly completions: Completions;

  constructor(client: APIClient) {
    this.completions = new Completions(client);
  }
}
