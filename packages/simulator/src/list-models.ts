import type { Protocol } from "./simulator-options";

/** Model ids each fake vendor lists; any other id is served as well. */
const MODELS: Record<Protocol, string[]> = {
  messages: ["alpha-opus-4-8", "alpha-sonnet-4-6", "alpha-haiku-4-5"],
  chat: ["beta-5.5", "beta-5", "delta-m3"],
  responses: ["beta-5.5", "beta-5"],
  generate: ["gamma-3-pro", "gamma-3-flash"],
};
const CREATED_AT = "2025-10-01T00:00:00Z";
const CREATED = Date.parse(CREATED_AT) / 1000;

function one(protocol: Protocol, id: string): unknown {
  switch (protocol) {
    case "messages":
      return { type: "model", id, display_name: id, created_at: CREATED_AT };
    case "chat":
    case "responses":
      return { id, object: "model", created: CREATED, owned_by: "simulator" };
    case "generate":
      return {
        name: `models/${id}`,
        version: "001",
        displayName: id,
        inputTokenLimit: 1_048_576,
        outputTokenLimit: 65_536,
        supportedGenerationMethods: ["generateContent", "countTokens"],
      };
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** `GET /v1/models` (messages or chat shape, docs/protocols.md §1.11, §2.9) or `GET /v1beta/models` (§3.1). */
export function listModels(protocol: Protocol): string {
  const ids = MODELS[protocol];
  const data = ids.map((id) => one(protocol, id));
  if (protocol === "messages") return JSON.stringify({ data, has_more: false, first_id: ids[0], last_id: ids.at(-1) });
  if (protocol === "chat") return JSON.stringify({ object: "list", data });
  return JSON.stringify({ models: data });
}

/** `GET /v1/models/{id}` and `GET /v1beta/models/{id}`: any id is known. */
export function getModel(protocol: Protocol, id: string): string {
  return JSON.stringify(one(protocol, id));
}
