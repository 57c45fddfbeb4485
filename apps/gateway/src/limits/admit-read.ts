import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { ClientFormat } from "../formats/client-format";
import { rateLimited } from "./admit";
import type { KeyRecord } from "../storage/store";

/**
 * A call that reads what a key stored and generates nothing (`GET`/`DELETE /v1/responses/{id}`,
 * its `input_items`): one request from the key's `rpm`, no tokens, and no budget (it costs
 * nothing). Counted before the lookup, so probing ids costs requests too. Returns the limit
 * headers its reply carries; a spent rpm is the same 429 an inference call gets.
 */
export async function admitRead(
  deps: Pick<GatewayDeps, "limiter" | "now">,
  format: ClientFormat,
  key: KeyRecord,
): Promise<Record<string, string>> {
  const [admission] = await deps.limiter.admit([{ bucket: key.id, limits: key }], 0);
  if (!admission) throw new GatewayError({ status: 500, message: "The limiter answered no admission." });
  const headers = format.limitHeaders(admission, deps.now());
  if (!admission.ok) throw rateLimited(admission, headers);
  return headers;
}
