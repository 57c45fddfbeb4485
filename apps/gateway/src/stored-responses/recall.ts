import { GatewayError } from "@turnpike/providers";
import type { ClientRequest } from "../formats";
import type { KeyRecord } from "../storage/store";
import { isCleanId } from "../storage/clean-text";
import type { ResponseStore } from "./response-store";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface RecallDeps {
  responses: ResponseStore;
  now: () => number;
}

/**
 * Between validate and resolve: a request that continues a stored reply (the Responses format's
 * `previous_response_id`) gets that reply's conversation put before its own input. Another key's
 * reply, or one that expired or was deleted, is a 404.
 */
export async function recall(
  deps: Pick<RecallDeps, "responses" | "now">,
  key: KeyRecord,
  client: ClientRequest,
): Promise<ClientRequest> {
  if (!client.continues || !client.continueFrom) return client;
  // An id with bytes no stored id has (a NUL, a lone surrogate, thousands of characters) names nothing.
  const stored = isCleanId(client.continues)
    ? await deps.responses.get(key.id, client.continues, new Date(deps.now()).toISOString())
    : undefined;
  if (!stored) {
    throw new GatewayError({
      status: 404,
      type: "invalid_request_error",
      code: "previous_response_not_found",
      param: "previous_response_id",
      message: `Previous response with id '${client.continues.slice(0, 100)}' not found.`,
    });
  }
  return client.continueFrom(stored);
}
