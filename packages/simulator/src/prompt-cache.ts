/**
 * The simulator's prompt cache for the messages protocol (docs/protocols.md §1.3, §1.6), so that
 * caching can be demonstrated and measured with no keys: a request's breakpoints (`cache_control`
 * on tools, system blocks and message blocks, or the top-level automatic one) mark prefixes; a
 * prefix seen before is read from the cache, the rest up to the last breakpoint is written. As
 * with the real vendor, a prefix shorter than {@link MIN_CACHED_TOKENS} is not cached.
 */
import { countPromptTokens, MESSAGE_OVERHEAD_TOKENS } from "./count-prompt-tokens";
import { arrayOf, isObject, type JsonObject } from "./json-access";

/** The shortest prefix the vendor caches, in tokens. */
export const MIN_CACHED_TOKENS = 1024;
/** Prefixes remembered at most; the oldest half is forgotten beyond it. */
export const CAPACITY = 10_000;

/** Cache reads and writes of one request; `input_tokens` is the rest of its prompt. */
export interface CacheUse {
  read: number;
  write: number;
  /** The part of `write` written for an hour. */
  write1h: number;
}

interface Breakpoint {
  key: string;
  tokens: number;
  hour: boolean;
}

const hasBreak = (b: unknown) => isObject(b) && isObject(b.cache_control);
const isHour = (b: unknown) => isObject(b) && isObject(b.cache_control) && b.cache_control.ttl === "1h";

/** Every breakpoint of a body, in prefix order, with the tokens of the prefix it closes. */
function breakpoints(body: JsonObject): Breakpoint[] {
  const tools = arrayOf(body.tools);
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : arrayOf(body.system);
  const messages = arrayOf(body.messages);
  const out: Breakpoint[] = [];
  const add = (prefix: JsonObject, hour: boolean) => {
    const full = { model: body.model, max_tokens: 0, messages: [], ...prefix };
    out.push({
      key: `${String(body.model)}\n${JSON.stringify(full)}`,
      tokens: countPromptTokens("messages", full),
      hour,
    });
  };
  tools.forEach((t, i) => {
    if (hasBreak(t)) add({ tools: tools.slice(0, i + 1) }, isHour(t));
  });
  system.forEach((b, i) => {
    if (hasBreak(b)) add({ tools, system: system.slice(0, i + 1) }, isHour(b));
  });
  messages.forEach((m, i) => {
    if (!isObject(m) || !Array.isArray(m.content)) return;
    m.content.forEach((b, j) => {
      if (hasBreak(b))
        add(
          { tools, system, messages: [...messages.slice(0, i), { ...m, content: arrayOf(m.content).slice(0, j + 1) }] },
          isHour(b),
        );
    });
  });
  // The top-level breakpoint caches the whole prompt.
  if (isObject(body.cache_control)) add({ tools, system, messages }, body.cache_control.ttl === "1h");
  return out;
}

/** Where each automatically caching protocol keeps its conversation. */
const TURNS_FIELD = { chat: "messages", generate: "contents", responses: "input" } as const;

/**
 * Prefixes of one request remembered at most: its longest ones, which are what the next turn of
 * the conversation reads. Lookups cover every prefix; only the writes are bounded, so a request of
 * any length adds at most this many entries.
 */
const WRITES_PER_REQUEST = CAPACITY / 2;

/** A seed-chained 64-bit hash: the key of a prefix is the hash of the previous prefix's key and the next turn. */
const chain = (seed: bigint, text: string): bigint => BigInt.asUintN(64, BigInt(Bun.hash(text, seed)));

/**
 * Tokens each turn adds to the prompt, turn by turn in order: the prompt of the first k turns
 * counts `base + sum of the first k` (the formula of count-prompt-tokens is a sum over turns). A
 * Responses function call that follows an assistant turn joins that turn's message, so it adds no
 * message overhead of its own.
 */
function turnCounter(protocol: keyof typeof TURNS_FIELD): (turn: unknown) => number {
  const field = TURNS_FIELD[protocol];
  let lastRole: unknown;
  return (turn) => {
    let n = countPromptTokens(protocol, { [field]: [turn] });
    if (protocol === "responses") {
      const t = isObject(turn) ? turn : undefined;
      if (t?.type === "function_call" && lastRole === "assistant") n -= MESSAGE_OVERHEAD_TOKENS;
      if (!t) lastRole = "user";
      else if (t.type === "function_call") lastRole = "assistant";
      else if (t.type === "function_call_output") lastRole = "tool";
      else if (t.type === undefined || t.type === "message") lastRole = t.role;
    }
    return n;
  };
}

export class SimPromptCache {
  private readonly seen = new Map<string, number>();

  /** Prefixes remembered now (at most {@link CAPACITY} between requests). */
  get size(): number {
    return this.seen.size;
  }

  /**
   * Chat completions and generateContent cache on their own, with no breakpoints and no charge
   * for writes (docs/protocols.md §2.5, §3.5): the longest run of leading turns seen before (of
   * at least {@link MIN_CACHED_TOKENS}) is a cache read. Called only for prompts that long.
   * Linear in the request's size: each turn is counted and hashed once, the key of a prefix
   * chained from the one before (a 6,000-turn conversation once took seconds and gigabytes
   * when every prefix was re-serialized and re-counted).
   */
  useAutomatic(protocol: keyof typeof TURNS_FIELD, body: JsonObject): CacheUse | undefined {
    const steps = this.automatic(protocol, body);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /**
   * {@link useAutomatic}, with `pause` awaited after each turn: a conversation of 30,000 turns is
   * counted and hashed in slices, the event loop (which the gateway may share) given turns between.
   */
  async useAutomaticSliced(
    protocol: keyof typeof TURNS_FIELD,
    body: JsonObject,
    pause: () => Promise<void>,
  ): Promise<CacheUse | undefined> {
    const steps = this.automatic(protocol, body);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      await pause();
    }
  }

  /** The automatic cache's work, one turn a step. */
  private *automatic(protocol: keyof typeof TURNS_FIELD, body: JsonObject): Generator<void, CacheUse | undefined> {
    const field = TURNS_FIELD[protocol];
    const turns = arrayOf(body[field]);
    const rest = { ...body, [field]: [] };
    let tokens = countPromptTokens(protocol, rest);
    const added = turnCounter(protocol);
    let hash = chain(0n, `${protocol}\n${String(body.model)}\n${JSON.stringify(rest)}`);
    const firstWrite = turns.length - WRITES_PER_REQUEST;
    let read = 0;
    for (let k = 0; k < turns.length; k++) {
      tokens += added(turns[k]);
      hash = chain(hash, JSON.stringify(turns[k]) ?? "null");
      if (tokens >= MIN_CACHED_TOKENS) {
        const key = `${protocol}:${hash.toString(36)}:${k}`;
        if (this.seen.has(key)) read = tokens;
        if (k >= firstWrite) this.seen.set(key, tokens);
      }
      yield;
    }
    this.trim();
    return read > 0 ? { read, write: 0, write1h: 0 } : undefined;
  }

  /** Forgets the oldest entries down to half the capacity, whatever one request added. */
  private trim(): void {
    if (this.seen.size <= CAPACITY) return;
    let drop = this.seen.size - CAPACITY / 2;
    for (const k of this.seen.keys()) {
      if (drop-- <= 0) break;
      this.seen.delete(k);
    }
  }

  /** What a messages request reads from and writes to the cache; undefined when it has no breakpoint. */
  use(body: JsonObject): CacheUse | undefined {
    const marks = breakpoints(body).filter((b) => b.tokens >= MIN_CACHED_TOKENS);
    if (marks.length === 0) return undefined;
    let read = 0;
    for (const m of marks) if (this.seen.has(m.key)) read = Math.max(read, m.tokens);
    const last = marks.reduce((a, b) => (b.tokens > a.tokens ? b : a));
    const write = this.seen.has(last.key) ? 0 : Math.max(0, last.tokens - read);
    for (const m of marks) this.seen.set(m.key, m.tokens);
    this.trim();
    return { read, write, write1h: last.hour ? write : 0 };
  }
}
