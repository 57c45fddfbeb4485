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

/** A pivot reply (a messages-format message) with this request's placeholders restored in its text, thinking and tool arguments. */
export function restoreMessage<T extends { content?: unknown }>(run: GuardrailRun, message: T): T {
  if (!run.restore.size || !Array.isArray(message.content)) return message;
  return {
    ...message,
    content: message.content.map((b: Block) => {
      switch (b?.type) {
        case "text":
          return { ...b, text: run.restoreText(String(b.text)) };
        case "thinking":
          return { ...b, thinking: run.restoreText(String(b.thinking)) };
        case "tool_use":
          return { ...b, input: strings(b.input, (s) => run.restoreText(s)) };
        default:
          return b;
      }
    }),
  };
}

/**
 * Restores placeholders in a streamed pivot reply, event by event: a placeholder split across
 * two deltas is held back until it is whole (at most the longest placeholder's length, at the end
 * of a delta that could still begin one), then sent restored; a block's stop releases what is held.
 * Tool-call arguments are restored with the value escaped for JSON, so the arguments stay valid.
 */
export class StreamRestorer {
  /** Held text per open block index, and whether that block's deltas are JSON. */
  private readonly held = new Map<
    number,
    { text: string; kind: "text_delta" | "thinking_delta" | "input_json_delta" }
  >();

  constructor(private readonly run: GuardrailRun) {}

  push(ev: MessagesStreamEvent, emit: (ev: MessagesStreamEvent) => void): void {
    if (ev.type === "content_block_delta") {
      const d = ev.delta as Record<string, Json> & { type: string };
      const field =
        d.type === "text_delta"
          ? "text"
          : d.type === "thinking_delta"
            ? "thinking"
            : d.type === "input_json_delta"
              ? "partial_json"
              : undefined;
      if (!field || typeof d[field] !== "string") return emit(ev);
      const h = this.held.get(ev.index);
      const text = (h?.text ?? "") + (d[field] as string);
      const cut = this.safeEnd(text);
      const kind = d.type as "text_delta" | "thinking_delta" | "input_json_delta";
      if (cut < text.length) this.held.set(ev.index, { text: text.slice(cut), kind });
      else this.held.delete(ev.index);
      if (cut === 0) return;
      const ready = this.run.restoreText(text.slice(0, cut), kind === "input_json_delta");
      return emit({ ...ev, delta: { ...d, [field]: ready } } as MessagesStreamEvent);
    }
    if (ev.type === "content_block_stop" || ev.type === "message_delta" || ev.type === "message_stop") {
      for (const [index, h] of ev.type === "content_block_stop"
        ? [[ev.index, this.held.get(ev.index)] as const]
        : [...this.held]) {
        if (!h) continue;
        this.held.delete(index);
        const field = h.kind === "text_delta" ? "text" : h.kind === "thinking_delta" ? "thinking" : "partial_json";
        emit({
          type: "content_block_delta",
          index,
          delta: { type: h.kind, [field]: this.run.restoreText(h.text, h.kind === "input_json_delta") },
        } as MessagesStreamEvent);
      }
    }
    emit(ev);
  }

  /** How much of `text` can go now: all of it, unless its end could be the start of a placeholder. */
  private safeEnd(text: string): number {
    const open = text.lastIndexOf("[");
    if (open === -1 || text.length - open >= this.run.longest) return text.length;
    const tail = text.slice(open);
    if (tail.includes("]")) return text.length;
    for (const ph of this.run.restore.keys()) if (ph.startsWith(tail)) return open;
    return text.length;
  }
}
