import type { Catalog, CatalogEntry } from "../routing/catalog";
import type { Endpoint, KeyRecord, UsageRecord } from "../storage/store";
import type { UsageWriter } from "./usage-writer";

/** Token counts as the pivot (messages format) reports them; `input_tokens` excludes cache. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  reasoning_tokens: number;
}

export const NO_USAGE: TokenUsage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  reasoning_tokens: 0,
};

/**
 * The usage record of one request, filled in as the reply goes by and written exactly once,
 * whether the reply completed, failed or the client went away.
 */
export class Meter {
  usage: TokenUsage = { ...NO_USAGE };
  /** The upstream reported final usage (otherwise counts are Turnpike's own). */
  reported = false;
  /** Text relayed to the client, kept only to count it if the upstream never reports usage. */
  readonly relayed: string[] = [];
  /**
   * Relayed frames whose text is read only when needed (a passthrough stream keeps the raw
   * `data` of its deltas rather than parsing each one on the hot path).
   */
  readonly relayedFrames: string[] = [];
  frameText: (data: string) => string = () => "";
  /**
   * Turnpike's own count of the prompt, used only when the upstream never reported input tokens
   * (a stream the client left early); computed lazily, since most calls never need it.
   */
  estimatePrompt: () => number = () => 0;
  upstreamStatus = 0;
  private done = false;

  constructor(
    private readonly writer: UsageWriter,
    private readonly catalog: Catalog,
    private readonly countText: (text: string) => number,
    readonly requestId: string,
    readonly key: KeyRecord,
    readonly entry: CatalogEntry,
    readonly endpoint: Endpoint,
    readonly stream: boolean,
    private readonly started: number,
    /** Told each record as it is made: settles the key's token bucket and monthly spend. */
    private readonly onRecord: (record: UsageRecord) => void = () => {},
  ) {}

  /** Merges reported usage; later reports overwrite (stream usage is cumulative). */
  report(u: Partial<TokenUsage>): void {
    for (const k of Object.keys(u) as (keyof TokenUsage)[]) {
      const v = u[k];
      if (typeof v === "number" && Number.isFinite(v)) this.usage[k] = v;
    }
  }

  /**
   * Writes the record (once); counts are Turnpike's own where the upstream reported none. The
   * promise settles when the record is committed.
   */
  finish(status: number, opts: { aborted?: boolean } = {}): Promise<void> {
    if (this.done) return Promise.resolve();
    this.done = true;
    const u = this.usage;
    let estimated = false;
    if (!this.reported) {
      // No final usage: count what went to the client, and the prompt if nothing reported it.
      const text = this.relayed.join("") + this.relayedFrames.map(this.frameText).join("");
      const counted = text ? this.countText(text) : 0;
      if (counted > u.output_tokens) {
        u.output_tokens = counted;
        estimated = true;
      }
      if (u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens === 0) {
        const prompt = this.estimatePrompt();
        if (prompt > 0) {
          u.input_tokens = prompt;
          estimated = true;
        }
      }
    }
    const input = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    const record: UsageRecord = {
      request_id: this.requestId,
      key_id: this.key.id,
      model: this.entry.id,
      endpoint: this.endpoint,
      stream: this.stream,
      input_tokens: input,
      output_tokens: u.output_tokens,
      cache_read_tokens: u.cache_read_input_tokens,
      cache_write_tokens: u.cache_creation_input_tokens,
      reasoning_tokens: u.reasoning_tokens,
      cost_usd: this.catalog.cost(this.entry, input, u.output_tokens),
      status,
      upstream_status: this.upstreamStatus,
      latency_ms: Math.round((performance.now() - this.started) * 100) / 100,
      aborted: opts.aborted ?? false,
      estimated,
      created_at: new Date().toISOString(),
    };
    this.onRecord(record);
    return this.writer.record(record);
  }
}
