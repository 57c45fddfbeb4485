import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { ClientRequest } from "../formats";
import type { KeyRecord } from "../storage/store";

/**
 * Between validate and resolve: a request that continues a stored reply (the Responses format's
 * `previous_response_id`) gets that reply's conversation put before its own input. Another key's
 * reply, or one that expired or was deleted, is a 404.
 */
export async function recall(deps: Pick<GatewayDeps, "responses" | "now">, key: KeyRecord, client: ClientRequest): Promise<ClientRequest> {
  if (!client.continues || !client.continueFrom) return client;
  const stored = await deps.responses.get(key.id, client.continues, new Date(deps.now()).toISOString());
  if (!stored) {
    throw new GatewayError({
      status: 404,
      type: "invalid_request_error",
      code: "previous_response_not_found",
      param: "previous_response_id",
      message: `Previous response with id '${client.continues}' not found.`,
    });
  }
  return client.continueFrom(stored);
}
