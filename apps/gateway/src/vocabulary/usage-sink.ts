import type { UsageTotals } from "@turnpike/providers";

/** Token counts in the pivot's terms: `input_tokens` excludes cache reads and writes. */
export type TokenCounts = Required<Omit<UsageTotals, "estimated" | "cache_creation_1h_input_tokens">> &
  Pick<UsageTotals, "cache_creation_1h_input_tokens">;

/** What a reply's reader (a stream machine, a passthrough scanner, a JSON reply) tells the tally. */
export interface UsageSink {
  /**
   * Usage the upstream reported. Fields overwrite field by field (stream usage is cumulative;
   * a closing report may leave out the input side). `final`: these are the upstream's closing
   * numbers for the output, not a placeholder.
   */
  report(usage: Partial<TokenCounts>, final: boolean): void;
  /** Text relayed to the client, counted only if the upstream never reports its usage. */
  relayed(text: string): void;
  /** A source of relayed text read only at the end, and only if it must be counted. */
  relayedLater(read: () => string): void;
  /** The vendor's own name of the model that answered, for the record. */
  answeredBy?(model: string): void;
  /** Why the reply ended (the pivot's `stop_reason`, or the vendor's own word), or a reader of it used only if asked. */
  finished?(reason: string | (() => string | undefined)): void;
}
