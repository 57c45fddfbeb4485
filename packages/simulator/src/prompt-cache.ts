/**
 * The simulator's prompt cache for the messages protocol (docs/protocols.md §1.3, §1.6), so that
 * caching can be demonstrated and measured with no keys: a request's breakpoints (`cache_control`
 * on tools, system blocks and message blocks, or the top-level automatic one) mark prefixes; a
 * prefix seen before is read from the cache, the rest up to the last breakpoint is written. As
 * with the real vendor, a prefix shorter than {@link MIN_CACHED_TOKENS} is not cached.
 */
import { countPromptTokens } from "./count-prompt-tokens";
import { arrayOf, isObject, type JsonObject } from "./json-access";

/** The shortest prefix the vendor caches, in tokens. */
export const MIN_CACHED_TOKENS = 1024;
/** Prefixes remembered at most; the oldest half is forgotten beyond it. */
const CAPACITY = 10_000;

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
    out.push({ key: `${String(body.model)}\n${JSON.stringify(full)}`, tokens: countPromptTokens("messages", full), hour });
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
      if (hasBreak(b)) add({ tools, system, messages: [...messages.slice(0, i), { ...m, content: arrayOf(m.content).slice(0, j + 1) }] }, isHour(b));
    });
  });
  // The top-level breakpoint caches the whole prompt.
  if (isObject(body.cache_control)) add({ tools, system, messages }, body.cache_control.ttl === "1h");
  return out;
}

/** Where each automatically caching protocol keeps its conversation. */
const TURNS_FIELD = { chat: "messages", generate: "contents", responses: "input" } as const;

export class SimPromptCache {
  private readonly seen = new Map<string, number>();

  /**
   * Chat completions and generateContent cache on their own, with no breakpoints and no charge
   * for writes (docs/protocols.md §2.5, §3.5): the longest run of leading turns seen before (of
   * at least {@link MIN_CACHED_TOKENS}) is a cache read. Called only for prompts that long.
   */
  useAutomatic(protocol: keyof typeof TURNS_FIELD, body: JsonObject): CacheUse | undefined {
    const field = TURNS_FIELD[protocol];
    const turns = arrayOf(body[field]);
    let read = 0;
    for (let k = 1; k <= turns.length; k++) {
      const prefix = { ...body, [field]: turns.slice(0, k) };
      const tokens = countPromptTokens(protocol, prefix);
      if (tokens < MIN_CACHED_TOKENS) continue;
      const key = `${protocol}\n${String(body.model)}\n${JSON.stringify(prefix)}`;
      if (this.seen.has(key)) read = tokens;
      this.seen.set(key, tokens);
    }
    this.trim();
    return read > 0 ? { read, write: 0, write1h: 0 } : undefined;
  }

  private trim(): void {
    if (this.seen.size > CAPACITY) for (const k of [...this.seen.keys()].slice(0, CAPACITY / 2)) this.seen.delete(k);
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
