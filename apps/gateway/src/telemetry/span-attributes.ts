import type { Attributes } from "@opentelemetry/api";
import type { Target } from "../protocols";
import { providerName } from "./gen-ai-names";
import type { UsageRecord } from "../storage/store";

/** Attribute names of the OpenTelemetry GenAI semantic conventions, and Turnpike's own. */
export const ATTR = {
  operation: "gen_ai.operation.name",
  system: "gen_ai.system",
  provider: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  finishReasons: "gen_ai.response.finish_reasons",
  errorType: "error.type",
  vendor: "turnpike.vendor",
  requestId: "turnpike.request_id",
  attempt: "turnpike.attempt",
  keyId: "turnpike.key_id",
  costUsd: "turnpike.cost_usd",
} as const;

/** What a request asked of which vendor. */
export function requestAttributes(target: Target): Attributes {
  const provider = providerName(target.upstream);
  // The older name and the newer one: collectors and backends read either.
  return {
    [ATTR.system]: provider,
    [ATTR.provider]: provider,
    [ATTR.requestModel]: target.entry.id,
    [ATTR.vendor]: target.upstream.vendor,
  };
}

/** What the usage record says of a finished request. */
export function usageAttributes(r: UsageRecord): Attributes {
  const out: Attributes = {
    [ATTR.inputTokens]: r.input_tokens,
    [ATTR.outputTokens]: r.output_tokens,
    [ATTR.keyId]: r.key_id,
    [ATTR.costUsd]: r.cost_usd,
  };
  if (r.upstream_model) out[ATTR.responseModel] = r.upstream_model;
  return out;
}
