import type { Protocol } from "@turnpike/schema";

/** One row of the model catalog: a model id a client can call, its vendor, prices and limits. */
export interface CatalogEntry {
  /** The id clients send. */
  id: string;
  /** The vendor that serves it (a row of the vendor table). */
  owned_by: string;
  display_name: string;
  protocol: Protocol;
  /** The id sent upstream (defaults to `id`). */
  upstream_model: string;
  /** Extra headers sent upstream with every call for this model. */
  upstream_headers: Record<string, string>;
  /** USD per million tokens: uncached input, output. */
  input_per_mtok: number;
  output_per_mtok: number;
  /** USD per million input tokens read from the vendor's prompt cache. */
  cache_read_per_mtok: number;
  /** USD per million input tokens written to the prompt cache for five minutes, and for an hour. */
  cache_write_5m_per_mtok: number;
  cache_write_1h_per_mtok: number;
  /**
   * `auto`: a request to a messages upstream that carries no `cache_control` at all gets
   * Turnpike's own cache breakpoints (`protocols/cache-breakpoints.ts`); `off`: never.
   */
  prompt_cache: PromptCacheMode;
  context_window: number;
  max_output_tokens: number;
  /** Release date, RFC 3339; the models list reports it as `created_at` and `created`. */
  created_at: string;
  /**
   * Set on an embedding model only: the length of its vectors when the client names no
   * `dimensions` (the most it may ask for). An embedding model serves `POST /v1/embeddings` and
   * nothing else; a chat model never serves embeddings.
   */
  embedding_dimensions?: number;
  /**
   * The share taken off the price of a batch line (0.5: half price), where the upstream bills
   * batch work less; unset: batch lines cost what other calls cost.
   */
  batch_discount?: number;
  /**
   * The service tiers the upstream sells besides its default one, each as a multiplier of every
   * token price of the row (priority 2: twice the price; flex 0.5: half). A tier a client asks for
   * is forwarded and billed only where it is listed here (docs/protocols.md §5.5a).
   */
  service_tiers?: Partial<Record<ServiceTier, number>>;
}

/** The tiers a catalog row may price besides the default one. */
export const SERVICE_TIERS = ["priority", "flex"] as const;
export type ServiceTier = (typeof SERVICE_TIERS)[number];

/** Whether Turnpike places prompt-cache breakpoints itself (per model, and per key on top). */
export type PromptCacheMode = "auto" | "off";

/** How an upstream takes its key. */
export type AuthScheme = "x-api-key" | "bearer" | "x-goog-api-key";

/** Where calls for one vendor go, as the gateway runs it. */
export interface Upstream {
  vendor: string;
  protocol: Protocol;
  /** In the vendor client library's convention: chat-protocol bases end in `/v1`. */
  baseURL: string;
  apiKey: string;
  auth: AuthScheme;
  /** Served by Turnpike's built-in simulator. */
  simulated: boolean;
}

/** One call's destination: a catalog entry on the upstream that serves it. */
export interface Target {
  entry: CatalogEntry;
  upstream: Upstream;
}
