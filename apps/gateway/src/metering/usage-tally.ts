import type { TokenCounts, UsageSink } from "../vocabulary/usage-sink";
import type { CatalogEntry, ServiceTier } from "../vocabulary/target";

const ZERO: TokenCounts = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  reasoning_tokens: 0,
};

/**
 * The usage of one request, accumulated once from what its reply's reader reports. At the end
 * {@link UsageTally.settle} gives the counts to bill: the upstream's own where it reported them,
 * else Turnpike's count of what reached the client (and of the prompt), flagged `estimated`.
 */
export class UsageTally implements UsageSink {
  private counts: TokenCounts = { ...ZERO };
  private isFinal = false;
  /** The upstream reported a number that cannot be true: none of its usage is used. */
  private distrusted = false;
  /** Made on first use (most replies relay nothing the tally must keep): two arrays less per request. */
  private texts: string[] | undefined;
  private later: (() => string)[] | undefined;
  /** The vendor's own name of the model that answered, once a reply has said it. */
  upstreamModel: string | undefined;

  answeredBy(model: string): void {
    this.upstreamModel ??= model;
  }

  private finish: string | (() => string | undefined) | undefined;

  finished(reason: string | (() => string | undefined)): void {
    this.finish = reason;
  }

  /** Why the reply ended, if a reader said (worked out now where it was left for later: only telemetry asks). */
  finishReason(): string | undefined {
    return typeof this.finish === "function" ? this.finish() : this.finish;
  }

  /**
   * @param maxTokens the most tokens one request can use on its model (context window plus
   *   output cap): a report beyond it, or one that is negative or fractional, is not believed.
   */
  constructor(private readonly maxTokens = Number.MAX_SAFE_INTEGER) {}

  report(usage: Partial<TokenCounts>, final: boolean): void {
    if (this.distrusted) return;
    const next = { ...this.counts };
    for (const key in usage) {
      const k = key as keyof TokenCounts; // a Partial<TokenCounts> has no other keys
      if (!Object.hasOwn(usage, k)) continue;
      const v: unknown = usage[k];
      if (v === undefined) continue;
      // Checked before it is billed: a negative count would lower a key's spend, an absurd one
      // bill millions (the record falls back to Turnpike's own count, flagged estimated).
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > this.maxTokens) return this.distrust();
      next[k] = v;
    }
    if (
      next.input_tokens + next.cache_read_input_tokens + next.cache_creation_input_tokens + next.output_tokens >
      this.maxTokens
    )
      return this.distrust();
    this.counts = next;
    // Closing numbers without an output count are not closing numbers (a wrongly shaped usage).
    if (final && usage.output_tokens !== undefined) this.isFinal = true;
  }

  /** The upstream's usage cannot be true (see usage-audit.ts): none of it is used, now or later. */
  distrust(): void {
    this.distrusted = true;
    this.counts = { ...ZERO };
    this.isFinal = false;
  }

  relayed(text: string): void {
    (this.texts ??= []).push(text);
  }

  relayedLater(read: () => string): void {
    (this.later ??= []).push(read);
  }

  /** The counts so far (read-only view). */
  get usage(): Readonly<TokenCounts> {
    return this.counts;
  }

  /** The upstream reported its closing numbers. */
  get final(): boolean {
    return this.isFinal;
  }

  /** Everything relayed to the client, as text. */
  relayedText(): string {
    // A source that cannot be read (a reply that does not convert) counts as no text.
    const read = (f: () => string): string => {
      try {
        return f();
      } catch {
        return "";
      }
    };
    const texts = this.texts ? this.texts.join("") : "";
    return this.later ? texts + this.later.map(read).join("") : texts;
  }

  /** The settled counts of the attempts before this one, summed (a continued stream's cut attempts). */
  private carried: TokenCounts | undefined;
  private carriedEstimated = false;
  /** Each attempt before this one, settled, with what served it: made only when a stream is cut. */
  private attempts: TallyAttempt[] | undefined;
  /** What serves the running attempt, when it is not the request's first target (a continuation). */
  private server: AttemptServer | undefined;
  /** A cut attempt was carried and no continuation has been served since: no attempt is running. */
  private between = false;

  /**
   * A cut attempt is over: its counts are settled as {@link settle} would (the relayed text
   * counted if the upstream never said), kept with what served it, and the next attempt is
   * tallied afresh once one is served ({@link servedBy}). Returns the sum of every attempt so far.
   */
  carry(countText: (text: string) => number, countPrompt: () => number): Readonly<TokenCounts> {
    if (!this.between) {
      const own = this.own(countText, countPrompt);
      (this.attempts ??= []).push({ counts: own.counts, server: this.server });
      this.carried = this.carried ? sum(this.carried, own.counts) : own.counts;
      this.carriedEstimated ||= own.estimated;
    }
    this.between = true;
    this.counts = { ...ZERO };
    this.isFinal = false;
    this.distrusted = false;
    this.texts = undefined;
    this.later = undefined;
    return this.carried ?? ZERO;
  }

  /**
   * A continuation is served: the attempt tallied from now on is priced at `entry` (and `tier`).
   * Until it is called after a {@link carry}, no attempt is running: a stream that nothing
   * continued bills its carried attempts only (not its prompt again).
   */
  servedBy(entry: CatalogEntry, tier: ServiceTier | undefined): void {
    this.server = { entry, serviceTier: tier };
    this.between = false;
  }

  /** The settled counts of the attempts before this one (zeros when none was cut). */
  get carriedUsage(): Readonly<TokenCounts> {
    return this.carried ?? ZERO;
  }

  /**
   * The counts to bill, summed over every attempt. Without the upstream's closing numbers: the
   * relayed text is counted (if that says more than the upstream did), and the prompt too if
   * nothing reported it. `attempts` is set only where a stream was cut: each attempt's own counts
   * and what served it (undefined: the request's first target), for a price per attempt.
   */
  settle(countText: (text: string) => number, countPrompt: () => number): Settled {
    if (!this.attempts) return this.own(countText, countPrompt);
    const attempts = this.attempts.slice();
    let counts: TokenCounts = { ...(this.carried ?? ZERO) };
    let estimated = this.carriedEstimated;
    if (!this.between) {
      const own = this.own(countText, countPrompt);
      attempts.push({ counts: own.counts, server: this.server });
      counts = sum(counts, own.counts);
      estimated ||= own.estimated;
    }
    return { counts, estimated, attempts };
  }

  /** The running attempt's counts, settled. */
  private own(countText: (text: string) => number, countPrompt: () => number): Settled {
    const c = { ...this.counts };
    let estimated = this.distrusted;
    if (!this.isFinal) {
      const text = this.relayedText();
      const counted = text ? countText(text) : 0;
      if (counted > c.output_tokens) {
        c.output_tokens = counted;
        estimated = true;
      }
      if (c.input_tokens + c.cache_read_input_tokens + c.cache_creation_input_tokens === 0) {
        const prompt = countPrompt();
        if (prompt > 0) {
          c.input_tokens = prompt;
          estimated = true;
        }
      }
    }
    return { counts: c, estimated };
  }
}

/** What served one attempt of a request: the catalog row it is priced at, and the tier. */
export interface AttemptServer {
  entry: CatalogEntry;
  serviceTier: ServiceTier | undefined;
}

/** One settled attempt of a continued stream; `server` undefined: the request's first target. */
export interface TallyAttempt {
  counts: TokenCounts;
  server: AttemptServer | undefined;
}

/** A tally's settled counts (see {@link UsageTally.settle}). */
export interface Settled {
  counts: TokenCounts;
  estimated: boolean;
  attempts?: TallyAttempt[];
}

/** Two attempts' counts, added key by key (a one-hour write count only where either has one). */
function sum(a: Readonly<TokenCounts>, b: Readonly<TokenCounts>): TokenCounts {
  const c = { ...a };
  for (const k in b) {
    const key = k as keyof TokenCounts; // the settled counts have only TokenCounts' keys
    c[key] = (c[key] ?? 0) + (b[key] ?? 0);
  }
  return c;
}
