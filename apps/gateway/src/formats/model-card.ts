import { PROTOCOLS } from "../protocols";
import { SERVICE_TIERS, type CatalogEntry } from "../vocabulary/target";
import { nanoDollars } from "../vocabulary/money";

/**
 * A model's capabilities and prices as `GET /v1/models` publishes them (docs/protocols.md
 * §5.5b), all from the catalog row that prices the ledger: the OpenRouter model
 * object's fields that many tools parse (`context_length`, per-token `pricing` strings,
 * `architecture`, `supported_parameters`, `top_provider`), the messages format's own
 * (`max_input_tokens`, `max_tokens`, `capabilities`), and Turnpike's cache, batch and tier prices
 * in one extension object, `turnpike`.
 */

/** Every chat model takes these through every format (structured output is carried or rewritten for each upstream). */
const COMMON_PARAMETERS = ["response_format", "structured_outputs", "include_reasoning"];

/** A price per million tokens as OpenRouter writes a price per token: a decimal string, never an exponent. */
export function perToken(perMtok: number): string {
  const fixed = (perMtok / 1_000_000).toFixed(12);
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

/** Prices per million tokens of one tier: the row's, times the tier's multiplier. */
function tierPrices(e: CatalogEntry, multiplier: number) {
  const m = (usd: number) => nanoDollars(usd * multiplier);
  return {
    multiplier,
    input_per_mtok: m(e.input_per_mtok),
    output_per_mtok: m(e.output_per_mtok),
    cache_read_per_mtok: m(e.cache_read_per_mtok),
    cache_write_5m_per_mtok: m(e.cache_write_5m_per_mtok),
    cache_write_1h_per_mtok: m(e.cache_write_1h_per_mtok),
  };
}

/** The fields a models-list entry gains from its catalog row. */
export function modelCard(e: CatalogEntry) {
  const embeds = e.embedding_dimensions !== undefined;
  const tiers: Record<string, ReturnType<typeof tierPrices>> = { default: tierPrices(e, 1) };
  for (const t of SERVICE_TIERS) {
    const multiplier = e.service_tiers?.[t];
    if (multiplier !== undefined) tiers[t] = tierPrices(e, multiplier);
  }
  const batch = e.batch_discount === undefined ? null : tierPrices(e, 1 - e.batch_discount);
  return {
    // OpenRouter's model object.
    context_length: e.context_window,
    architecture: {
      input_modalities: embeds ? ["text"] : ["text", "image", "file"],
      output_modalities: embeds ? ["embeddings"] : ["text"],
      tokenizer: "Other",
    },
    pricing: {
      prompt: perToken(e.input_per_mtok),
      completion: perToken(e.output_per_mtok),
      request: "0",
      image: "0",
      input_cache_read: perToken(e.cache_read_per_mtok),
      input_cache_write: perToken(e.cache_write_5m_per_mtok),
    },
    top_provider: {
      context_length: e.context_window,
      max_completion_tokens: embeds ? null : e.max_output_tokens,
      is_moderated: false,
    },
    supported_parameters: embeds ? [] : [...PROTOCOLS[e.protocol].parameters, ...COMMON_PARAMETERS],
    // The messages format's model object (its newer fields).
    max_input_tokens: e.context_window,
    max_tokens: e.max_output_tokens,
    capabilities: embeds
      ? null
      : {
          image_input: { supported: true },
          pdf_input: { supported: true },
          structured_outputs: { supported: true },
          thinking: { supported: true },
          batch: { supported: true },
        },
    // Turnpike's own: what the ledger bills, per million tokens, for each way a call is made.
    turnpike: {
      currency: "USD",
      unit: "per_mtok",
      service_tiers: tiers,
      batch,
    },
  };
}

/**
 * One entry shape that both standard client libraries parse: the chat format's
 * `{id, object, created, owned_by}` and the messages format's `{type, id, display_name,
 * created_at}`, plus what a client needs to pick and budget: the capabilities and prices of the
 * catalog row in the fields tools read (formats/model-card.ts). `pricing` holds both OpenRouter's
 * per-token strings and Turnpike's per-million numbers; their names do not meet.
 */
export function modelEntry(e: CatalogEntry) {
  const card = modelCard(e);
  return {
    ...card,
    id: e.id,
    object: "model" as const,
    type: "model" as const,
    display_name: e.display_name,
    created: Math.floor(Date.parse(e.created_at) / 1000),
    created_at: e.created_at,
    owned_by: e.owned_by,
    context_window: e.context_window,
    max_output_tokens: e.max_output_tokens,
    embeds: e.embedding_dimensions !== undefined,
    ...(e.embedding_dimensions !== undefined ? { embedding_dimensions: e.embedding_dimensions } : {}),
    pricing: {
      ...card.pricing,
      input_per_mtok: e.input_per_mtok,
      output_per_mtok: e.output_per_mtok,
      cache_read_per_mtok: e.cache_read_per_mtok,
      cache_write_5m_per_mtok: e.cache_write_5m_per_mtok,
      cache_write_1h_per_mtok: e.cache_write_1h_per_mtok,
      currency: "USD",
    },
  };
}
