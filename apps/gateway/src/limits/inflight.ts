/**
 * A request admitted and not yet recorded, as written where other instances can see it: enough
 * to bill it (as aborted, estimated) if its instance dies before it ends, and to release what it
 * reserved against its budgets (docs/design.md, "Money is reserved, not counted after").
 */
export interface InflightRequest {
  request_id: string;
  key_id: string;
  model: string;
  endpoint: string;
  stream: boolean;
  /** The input estimated at admission (tokens). */
  input_tokens: number;
  /** What the request costs if its instance dies: its estimated input, no output. */
  cost_usd: number;
  /** What admission reserved against the request's budgets. */
  reserved_usd: number;
  /** The budgets it is held against (the key's id; a team's later). */
  budgets: string[];
  created_at: string;
}

/** The shared book of requests in flight; absent on an embedded (single-instance) store. */
export interface InflightBook {
  /**
   * The request is admitted: its entry is written once it has run a moment (batched with the
   * others, never awaited by the request); a request that ends sooner is never written.
   */
  open(r: InflightRequest): void;
  /**
   * The request ends: an entry not yet written is forgotten; a written one goes with the insert
   * of its usage record (`recorded`), or else is deleted here.
   */
  end(requestId: string, recorded: boolean): void;
}
