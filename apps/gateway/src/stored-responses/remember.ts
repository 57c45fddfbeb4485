import type { ClientRequest } from "../formats";
import type { KeyRecord } from "../storage/store";
import type { GuardrailRun } from "../guardrails/run";
import { storedForm } from "../guardrails/surfaces";
import type { ResponseStore } from "./response-store";
import type { Logger } from "../log/logger";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface RememberDeps {
  responses: ResponseStore;
  now: () => number;
  config: { responsesRetentionDays: number };
  logger: Logger;
}

/**
 * After a reply is written (before the client sees its end): a reply the client asked to keep is
 * stored under its key for the configured retention, with the conversation up to it. A store
 * that fails does not fail the reply; it is logged.
 */
export async function remember(
  deps: Pick<RememberDeps, "responses" | "now" | "config" | "logger">,
  key: KeyRecord,
  client: ClientRequest,
  requestId: string,
  guard?: GuardrailRun,
): Promise<void> {
  const toStore = client.toStore?.();
  // With guardrails, the redacted form is kept: no value a policy took out is stored (docs/guardrails.md).
  const kept = guard && toStore ? storedForm(guard, toStore) : toStore;
  if (!kept) return;
  const id = kept.response.id;
  if (typeof id !== "string") return;
  const now = deps.now();
  try {
    await deps.responses.put({
      id,
      key_id: key.id,
      model: client.model,
      response: kept.response,
      input_items: kept.inputItems,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + deps.config.responsesRetentionDays * 86_400_000).toISOString(),
    });
  } catch (e) {
    deps.logger.error("storing a response failed", { request_id: requestId, response_id: id }, e);
  }
}
