import { GatewayError, GUARDRAIL_BLOCKED, keepOrigin } from "@turnpike/providers";
import type { MessagesRequest, MessagesStreamEvent } from "@turnpike/schema";
import { GuardrailBlock, type GuardrailRun } from "./run";
import { askHooks, type HookText } from "./hook";
import type { Surface } from "./policy";

type Json = unknown;

/** Every string inside a JSON value (a tool call's arguments, a schema's descriptions) passed through `f`. */
export function strings(v: Json, f: (s: string) => string): Json {
  if (typeof v === "string") return f(v);
  if (Array.isArray(v)) return v.map((x) => strings(x, f));
  if (v && typeof v === "object") {
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v)) out[k] = strings(x, f);
    return out;
  }
  return v;
}

type Block = Record<string, Json> & { type?: string };

/** A copy of an object of the pivot, keeping where the original came from in the client's request (its errors' paths). */
function copied<T extends object>(copy: T, from: object): T {
  keepOrigin(copy, from);
  return copy;
}

/** How one text of the request is redacted (the walk below calls it on each text, in one order). */
type Redact = (text: string, surface: Surface) => string;

/** A content list (or a bare string) with its text redacted; tool calls and results count as `tools`. */
function content(run: GuardrailRun, redact: Redact, c: Json, surface: Surface): Json {
  if (typeof c === "string") return redact(c, surface);
  if (!Array.isArray(c)) return c;
  return c.map((b: Block) => {
    switch (b?.type) {
      case "text":
        return typeof b.text === "string" ? copied({ ...b, text: redact(b.text, surface) }, b) : b;
      case "tool_use":
      case "server_tool_use":
        return run.covers("tools") ? copied({ ...b, input: strings(b.input, (s) => redact(s, "tools")) }, b) : b;
      case "tool_result":
        return run.covers("tools") ? copied({ ...b, content: content(run, redact, b.content, "tools") }, b) : b;
      default:
        // Images, documents and signed thinking go as they are: a signature covers its text.
        return b;
    }
  });
}

/** The pivot request with `redact` applied to each text a policy may look at. */
function walk(run: GuardrailRun, request: MessagesRequest, redact: Redact): MessagesRequest {
  const out = copied({ ...request }, request) as MessagesRequest & Record<string, Json>;
  if (run.covers("prompt") && request.system !== undefined)
    out.system = content(run, redact, request.system, "prompt") as never;
  out.messages = request.messages.map((m) =>
    copied({ ...m, content: content(run, redact, m.content, "prompt") }, m),
  ) as never;
  if (run.covers("tools") && Array.isArray(request.tools))
    out.tools = request.tools.map((t) => {
      const tool = t as Block;
      return copied(
        {
          ...tool,
          ...(typeof tool.description === "string" ? { description: redact(tool.description, "tools") } : {}),
        },
        tool,
      );
    }) as never;
  return out;
}

/**
 * The pivot request (the messages format) with what the policies find redacted: the system
 * prompt and the messages' text (`prompt`), the tools' descriptions and the conversation's tool
 * calls and results (`tools`). Throws GuardrailBlock for a value a blocking policy finds.
 */
export function redactRequest(run: GuardrailRun, request: MessagesRequest): MessagesRequest {
  return walk(run, request, (t, s) => run.text(t, s));
}

/**
 * {@link redactRequest} with the policies' external hooks asked first, about the same texts:
 * their spans are redacted beside the detectors' (docs/guardrails.md, "External hooks").
 */
export async function redactRequestWithHooks(
  run: GuardrailRun,
  request: MessagesRequest,
  requestId: string,
  fetcher?: typeof fetch,
): Promise<MessagesRequest> {
  const texts: HookText[] = [];
  walk(run, request, (text, surface) => {
    texts.push({ surface, text });
    return text;
  });
  const hooked = await askHooks(run, texts, requestId, fetcher);
  let i = 0;
  return walk(run, request, (t, s) => run.text(t, s, hooked[i++]));
}

/**
 * An MCP tool call's arguments with what the policies find redacted (surface `mcp`): every string
 * inside. Throws GuardrailBlock for a value a blocking policy finds.
 */
export function redactArguments(run: GuardrailRun, args: Record<string, unknown> | undefined) {
  return args === undefined ? args : (strings(args, (s) => run.text(s, "mcp")) as Record<string, unknown>);
}

/** An MCP tool result with this request's placeholders restored in every string inside. */
export function restoreStrings<T>(run: GuardrailRun, v: T): T {
  return run.restore.size ? (strings(v, (s) => run.restoreText(s)) as T) : v;
}

/** The client's error for a blocked request: a 400 naming the policy and the category, never the value. */
export function blockedError(b: GuardrailBlock): GatewayError {
  return new GatewayError({ status: 400, type: GUARDRAIL_BLOCKED, code: GUARDRAIL_BLOCKED, message: b.message });
}

/** The request redacted (with its policies' hooks, if any), a block turned into the client's 400 (`guardrail_blocked`). */
export async function redactGuarded(
  run: GuardrailRun,
  request: MessagesRequest,
  requestId: string,
  fetcher?: typeof fetch,
): Promise<MessagesRequest> {
  run.restart();
  try {
    // Once per request: the placeholders a continued conversation already holds are not reused.
    if (!run.reservedRead) {
      walk(run, request, (t) => {
        run.reserve(t);
        return t;
      });
      run.reservedRead = true;
    }
    return run.hooked ? await redactRequestWithHooks(run, request, requestId, fetcher) : redactRequest(run, request);
  } catch (e) {
    throw e instanceof GuardrailBlock ? blockedError(e) : e;
  }
}

/**
 * What the model wrote, as the client gets it: the policies that read replies act on it first
 * (on the text as the model wrote it, so a value restored from this request's own placeholder is
 * never flagged; `redact` acts as `mask`, there being nothing to restore; `block` throws
 * GuardrailBlock), then this request's placeholders are restored (`json`: escaped for a JSON string).
 */
function replyText(run: GuardrailRun, text: string, json = false): string {
  const read = run.readsReply ? run.text(text, "reply", undefined, { restorable: false }) : text;
  return run.restoreText(read, json);
}

/**
 * A pivot reply (a messages-format message) as the client gets it, in its text, thinking and tool
 * arguments: what the reply policies find masked, this request's placeholders restored. Throws
 * GuardrailBlock for a value a blocking policy finds in it.
 */
export function restoreMessage<T extends { content?: unknown }>(run: GuardrailRun, message: T): T {
  if ((!run.restore.size && !run.readsReply) || !Array.isArray(message.content)) return message;
  return {
    ...message,
    content: message.content.map((b: Block) => {
      switch (b?.type) {
        case "text":
          return { ...b, text: replyText(run, String(b.text)) };
        case "thinking":
          return { ...b, thinking: replyText(run, String(b.thinking)) };
        case "tool_use":
          return { ...b, input: strings(b.input, (s) => replyText(run, s)) };
        default:
          return b;
      }
    }),
  };
}

type DeltaKind = "text_delta" | "thinking_delta" | "input_json_delta";
const FIELD: Record<DeltaKind, "text" | "thinking" | "partial_json"> = {
  text_delta: "text",
  thinking_delta: "thinking",
  input_json_delta: "partial_json",
};

/**
 * How much of a reply's text the policies that read replies hold back (in characters, at the
 * least): a value may still be growing at the end of what came. The cut is then moved back to
 * the start of the word it falls in and of any value found across it, so a value split over
 * deltas is read whole. A private key's block is held from its first line to its last.
 */
export const REPLY_LOOKBACK = 64;
const PEM_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/;

/**
 * A streamed pivot reply as the client gets it, event by event: what the reply policies find
 * masked (a value split across deltas read whole: {@link REPLY_LOOKBACK}), and this request's
 * placeholders restored — one split across two deltas is held back until it is whole (at most the
 * longest placeholder's length). A block's stop releases what it holds. Tool-call arguments are
 * restored with the value escaped for JSON, so the arguments stay valid. A value a blocking
 * policy finds ends the reply's content there: a text block gets the block's notice (naming the
 * policy and category, never the value), and nothing more of the reply is sent.
 */
export class StreamRestorer {
  /** Held text per open block index, and whether that block's deltas are JSON. */
  private readonly held = new Map<number, { text: string; kind: DeltaKind }>();
  /** A blocking policy found a value in the reply: the rest of its content is dropped. */
  private blocked = false;

  constructor(private readonly run: GuardrailRun) {}

  push(ev: MessagesStreamEvent, emit: (ev: MessagesStreamEvent) => void): void {
    if (ev.type === "content_block_delta") {
      if (this.blocked) return;
      const d = ev.delta as Record<string, Json> & { type: string };
      const kind = d.type in FIELD ? (d.type as DeltaKind) : undefined; // checked in this line
      if (!kind || typeof d[FIELD[kind]] !== "string") return emit(ev);
      const h = this.held.get(ev.index);
      const text = (h?.text ?? "") + (d[FIELD[kind]] as string);
      let cut = this.safeEnd(text);
      // The reply policies read the piece with what follows it in view (values across the cut whole).
      let read: string | undefined;
      if (this.run.readsReply && cut > 0) {
        try {
          ({ cut, text: read } = this.run.replyPiece(text, cut));
        } catch (e) {
          if (!(e instanceof GuardrailBlock)) throw e;
          return this.stop(ev.index, kind, e, emit);
        }
      }
      if (cut < text.length) this.held.set(ev.index, { text: text.slice(cut), kind });
      else this.held.delete(ev.index);
      if (cut === 0) return;
      if (read === undefined) return this.send(ev.index, kind, text.slice(0, cut), emit);
      return this.delta(ev.index, kind, this.run.restoreText(read, kind === "input_json_delta"), emit);
    }
    if (ev.type === "content_block_stop" || ev.type === "message_delta" || ev.type === "message_stop") {
      for (const [index, h] of ev.type === "content_block_stop"
        ? [[ev.index, this.held.get(ev.index)] as const]
        : [...this.held]) {
        if (!h) continue;
        this.held.delete(index);
        if (!this.blocked) this.send(index, h.kind, h.text, emit);
      }
    }
    emit(ev);
  }

  /** One piece of a block's text, read and restored, as a delta (or the block's notice). */
  private send(index: number, kind: DeltaKind, text: string, emit: (ev: MessagesStreamEvent) => void): void {
    let ready: string;
    try {
      ready = replyText(this.run, text, kind === "input_json_delta");
    } catch (e) {
      if (!(e instanceof GuardrailBlock)) throw e;
      return this.stop(index, kind, e, emit);
    }
    this.delta(index, kind, ready, emit);
  }

  private delta(index: number, kind: DeltaKind, text: string, emit: (ev: MessagesStreamEvent) => void): void {
    if (text)
      emit({ type: "content_block_delta", index, delta: { type: kind, [FIELD[kind]]: text } } as MessagesStreamEvent);
  }

  /** A blocking policy found a value: nothing more of the reply's content; a text block says why it ends (JSON arguments cannot). */
  private stop(index: number, kind: DeltaKind, e: GuardrailBlock, emit: (ev: MessagesStreamEvent) => void): void {
    this.blocked = true;
    this.held.clear();
    if (kind !== "input_json_delta") this.delta(index, kind, `[${e.message}]`, emit);
  }

  /** How much of `text` can go now: all of it, unless its end could be the start of a placeholder or of a value. */
  private safeEnd(text: string): number {
    let cut = text.length;
    if (this.run.readsReply) cut = this.replyCut(text);
    const open = text.lastIndexOf("[", cut - 1);
    if (open === -1 || cut - open >= this.run.longest) return cut;
    const tail = text.slice(open, cut);
    if (tail.includes("]")) return cut;
    for (const ph of this.run.restore.keys()) if (ph.startsWith(tail)) return open;
    return cut;
  }

  /**
   * Where the reply policies let the text be cut before they read it: {@link REPLY_LOOKBACK}
   * back, at a word's start, before an unfinished private key; nothing until that much has come
   * (the policies read pieces of at least that length, not every delta).
   */
  private replyCut(text: string): number {
    let cut = text.length - REPLY_LOOKBACK;
    if (cut < REPLY_LOOKBACK) return 0;
    // Back to the start of the word the cut falls in (a value without spaces is a word).
    while (cut > 0 && !/\s/.test(text[cut - 1]!)) cut--;
    const pem = text.lastIndexOf("-----BEGIN", cut);
    if (pem !== -1 && !PEM_END.test(text.slice(pem))) cut = pem;
    return cut;
  }
}
