/**
 * Pivot stream events (messages format) → the Responses format's stream (docs/protocols.md §5):
 * `response.created` and `response.in_progress` first; per output item `output_item.added`, its
 * parts and deltas, `output_item.done`; then `response.completed` or `response.incomplete`
 * carrying the whole response with usage — or, on an in-band error, `error` and
 * `response.failed`. Every event carries its `sequence_number`; the items and the final
 * response are the ones the JSON reply of the same request would hold, so a client's stream
 * helper rebuilds exactly that reply.
 */
import type {
  MessagesStreamEvent,
  ResponsesOutputItem,
  ResponsesResponse,
  ResponsesStreamEventType,
} from "@turnpike/schema";
import { randomId } from "../ids.js";
import { isRecord } from "../json.js";
import { messagesUsageFields, type UsageTotals } from "../usage.js";
import {
  clientFunctionName,
  customToolInput,
  usageToResponses,
  responsesEnvelope,
  responsesStatusOf,
  type ResponsesReplyContext,
} from "./convert-messages-response-to-responses.js";

type Message = Extract<ResponsesOutputItem, { type: "message" }>;
type Call = Extract<ResponsesOutputItem, { type: "function_call" }>;
type Reasoning = Extract<ResponsesOutputItem, { type: "reasoning" }>;
type CustomCall = Extract<ResponsesOutputItem, { type: "custom_tool_call" }>;

/**
 * The output item a pivot block is being written into. `head` is the JSON members its events
 * begin with (`"item_id":…,"output_index":…` and, for a text part, `"content_index":…`), written
 * once per block rather than once per delta.
 */
type Open =
  | { kind: "text"; item: Message; index: number; part: number; head: string }
  | { kind: "call"; item: Call; index: number; head: string }
  | { kind: "custom"; item: CustomCall; index: number; json: string }
  | { kind: "reasoning"; item: Reasoning; index: number; head: string };

/** `"item_id":"…","output_index":N` of an item's events. */
function itemHead(id: string, index: number): string {
  return `"item_id":${JSON.stringify(id)},"output_index":${index}`;
}

export class MessagesToResponsesMachine {
  private seq = 0;
  private readonly output: ResponsesOutputItem[] = [];
  private open: Open | undefined;
  /** The message item text blocks go into while no other item came between. */
  private message: { item: Message; index: number } | undefined;
  private usage: Partial<UsageTotals> = {};
  private stop: Parameters<typeof responsesStatusOf>[0];
  private started = false;
  private ended = false;
  private readonly ctx: ResponsesReplyContext & { id: string; createdAt: number };
  /** The response the stream ended with (completed, incomplete or failed), once it has ended. */
  final: ResponsesResponse | undefined;
  /** The upstream's own response object, when this stream goes on from one ({@link resume}). */
  private base: Record<string, unknown> | undefined;

  /** This stream went on from an upstream's ({@link resume}): its items are the vendor's. */
  get resumed(): boolean {
    return this.base !== undefined;
  }

  constructor(
    ctx: ResponsesReplyContext,
    private readonly write: (frame: string) => void,
  ) {
    this.ctx = { ...ctx, id: ctx.id ?? randomId("resp_"), createdAt: ctx.createdAt ?? Math.floor(Date.now() / 1000) };
  }

  /**
   * One event, written as `JSON.stringify({ type, ...members, sequence_number })` would write it,
   * from `members`: the JSON text of the members between (their values already JSON). JSON text
   * holds no line break, so the data is one line. The event names are plain ASCII: their JSON is
   * themselves in quotes.
   */
  private frame(type: ResponsesStreamEventType, members: string): void {
    this.write(`event: ${type}\ndata: {"type":"${type}",${members},"sequence_number":${this.seq++}}\n\n`);
  }

  /** An event from its body's object (the events each stream writes once or once an item). */
  private emit(type: ResponsesStreamEventType, body: Record<string, unknown>): void {
    const json = JSON.stringify(body); // `{…}`, never empty here
    this.frame(type, json.slice(1, -1));
  }

  private begin(): void {
    if (this.started) return;
    this.started = true;
    // Both events carry the same response: its JSON is written once.
    const response = `"response":${JSON.stringify(responsesEnvelope(this.ctx, "in_progress", [], null))}`;
    this.frame("response.created", response);
    this.frame("response.in_progress", response);
  }

  /** Closes the message item text went into (a later text block starts a new one). */
  private closeMessage(): void {
    if (!this.message) return;
    this.message.item.status = "completed";
    this.emit("response.output_item.done", { output_index: this.message.index, item: this.message.item });
    this.message = undefined;
  }

  private addItem<T extends ResponsesOutputItem>(item: T): number {
    this.output.push(item);
    const index = this.output.length - 1;
    this.emit("response.output_item.added", {
      output_index: index,
      item: { ...item, ...(item.type === "message" ? { content: [] } : {}) },
    });
    return index;
  }

  push(ev: MessagesStreamEvent): void {
    if (this.ended) return;
    switch (ev.type) {
      case "message_start":
        this.usage = messagesUsageFields(ev.message.usage);
        this.begin();
        return;
      case "content_block_start": {
        this.begin();
        const b = ev.content_block;
        // A resumed stream's open text part takes the continuation's first text (it never closed).
        if (b.type === "text" && this.open?.kind === "text") return;
        if (b.type === "text") {
          if (!this.message) {
            const item: Message = {
              type: "message",
              id: randomId("msg_"),
              status: "in_progress",
              role: "assistant",
              content: [],
            };
            this.message = { item, index: this.addItem(item) };
          }
          const { item, index } = this.message;
          item.content.push({ type: "output_text", text: "", annotations: [], logprobs: [] });
          const part = item.content.length - 1;
          const head = `${itemHead(item.id, index)},"content_index":${part}`;
          this.open = { kind: "text", item, index, part, head };
          this.frame(
            "response.content_part.added",
            `${head},"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`,
          );
        } else if (b.type === "tool_use" && this.ctx.custom?.[b.name]) {
          // A custom tool offered as a function: its one string argument is the call's input.
          this.closeMessage();
          const item: CustomCall = {
            type: "custom_tool_call",
            id: randomId("ctc_"),
            call_id: b.id,
            name: b.name,
            input: "",
            status: "in_progress",
          };
          this.open = { kind: "custom", item, index: this.addItem(item), json: "" };
        } else if (b.type === "tool_use") {
          this.closeMessage();
          const item: Call = {
            type: "function_call",
            id: randomId("fc_"),
            call_id: b.id,
            ...clientFunctionName(b.name, this.ctx),
            arguments: "",
            status: "in_progress",
          };
          const index = this.addItem(item);
          this.open = { kind: "call", item, index, head: itemHead(item.id, index) };
        } else if (b.type === "thinking") {
          this.closeMessage();
          const item: Reasoning = { type: "reasoning", id: randomId("rs_"), summary: [] };
          const index = this.addItem(item);
          this.open = { kind: "reasoning", item, index, head: itemHead(item.id, index) };
        } else {
          this.open = undefined; // redacted thinking and server-tool blocks have no item here
        }
        return;
      }
      case "content_block_delta": {
        const o = this.open;
        const d = ev.delta;
        if (o?.kind === "text" && d.type === "text_delta") {
          const part = o.item.content[o.part];
          if (part) part.text += d.text;
          this.frame("response.output_text.delta", `${o.head},"delta":${JSON.stringify(d.text)},"logprobs":[]`);
        } else if (o?.kind === "call" && d.type === "input_json_delta") {
          if (!d.partial_json) return;
          o.item.arguments += d.partial_json;
          this.frame("response.function_call_arguments.delta", `${o.head},"delta":${JSON.stringify(d.partial_json)}`);
        } else if (o?.kind === "custom" && d.type === "input_json_delta") {
          // The input is a JSON string inside the arguments: written out whole once they are.
          o.json += d.partial_json;
        } else if (o?.kind === "reasoning" && d.type === "thinking_delta") {
          if (o.item.summary.length === 0) {
            o.item.summary.push({ type: "summary_text", text: "" });
            this.frame(
              "response.reasoning_summary_part.added",
              `${o.head},"summary_index":0,"part":{"type":"summary_text","text":""}`,
            );
          }
          const s = o.item.summary[0];
          if (s) s.text += d.thinking;
          this.frame(
            "response.reasoning_summary_text.delta",
            `${o.head},"summary_index":0,"delta":${JSON.stringify(d.thinking)}`,
          );
        }
        return;
      }
      case "content_block_stop": {
        const o = this.open;
        this.open = undefined;
        if (!o) return;
        if (o.kind === "text") {
          const part = o.item.content[o.part];
          // The part's whole text, escaped once for both events.
          const text = JSON.stringify(part?.text ?? "");
          this.frame("response.output_text.done", `${o.head},"text":${text},"logprobs":[]`);
          this.frame(
            "response.content_part.done",
            `${o.head},"part":{"type":"output_text","text":${text},"annotations":[],"logprobs":[]}`,
          );
        } else if (o.kind === "call") {
          // An argument-less call is `{}`, as in the JSON reply — and so are its deltas (a client
          // that joins the deltas must get the same arguments as the done event).
          if (o.item.arguments === "") {
            o.item.arguments = "{}";
            this.frame("response.function_call_arguments.delta", `${o.head},"delta":"{}"`);
          }
          o.item.status = "completed";
          this.frame(
            "response.function_call_arguments.done",
            `${o.head},"arguments":${JSON.stringify(o.item.arguments)}`,
          );
          this.emit("response.output_item.done", { output_index: o.index, item: o.item });
        } else if (o.kind === "custom") {
          let args: unknown = {};
          try {
            args = o.json ? JSON.parse(o.json) : {};
          } catch {
            args = o.json;
          }
          o.item.input = customToolInput(args);
          o.item.status = "completed";
          if (o.item.input)
            this.emit("response.custom_tool_call_input.delta", {
              item_id: o.item.id,
              output_index: o.index,
              delta: o.item.input,
            });
          this.emit("response.custom_tool_call_input.done", {
            item_id: o.item.id,
            output_index: o.index,
            input: o.item.input,
          });
          this.emit("response.output_item.done", { output_index: o.index, item: o.item });
        } else {
          const s = o.item.summary[0];
          if (s) {
            this.emit("response.reasoning_summary_text.done", {
              item_id: o.item.id,
              output_index: o.index,
              summary_index: 0,
              text: s.text,
            });
            this.emit("response.reasoning_summary_part.done", {
              item_id: o.item.id,
              output_index: o.index,
              summary_index: 0,
              part: s,
            });
          }
          this.emit("response.output_item.done", { output_index: o.index, item: o.item });
        }
        return;
      }
      case "message_delta":
        if (ev.delta.stop_reason !== undefined) this.stop = ev.delta.stop_reason;
        // Cumulative numbers: the fields the delta carries overwrite, the ones it leaves out stand.
        if (ev.usage) this.usage = { ...this.usage, ...messagesUsageFields(ev.usage) };
        return;
      case "message_stop": {
        this.begin();
        this.closeMessage();
        this.ended = true;
        const { status, incomplete } = responsesStatusOf(this.stop);
        const response = this.envelope(status, incomplete, null);
        this.final = response;
        this.frame(
          status === "incomplete" ? "response.incomplete" : "response.completed",
          `"response":${JSON.stringify(response)}`,
        );
        return;
      }
      case "error":
        this.fail(ev.error.type, ev.error.message);
        return;
      case "ping":
        return;
      default: {
        const never: never = ev;
        return never;
      }
    }
  }

  /** The response as it ends: Turnpike's envelope, or the upstream's own object with its end put in. */
  private envelope(
    status: ResponsesResponse["status"],
    incomplete: ResponsesResponse["incomplete_details"],
    error: ResponsesResponse["error"],
  ): ResponsesResponse {
    const usage = usageToResponses(this.usage);
    if (!this.base) return responsesEnvelope(this.ctx, status, this.output, usage, incomplete, error);
    const completedAt = status === "completed" ? Math.floor(Date.now() / 1000) : null;
    // The vendor's object, read leniently: its fields are the ones its client has seen since `response.created`.
    return {
      ...this.base,
      status,
      completed_at: completedAt,
      error,
      incomplete_details: incomplete,
      output: this.output,
      usage,
    } as unknown as ResponsesResponse;
  }

  /**
   * Goes on from a stream the client has received from a Responses upstream (a passthrough cut
   * after its 200): `events` are the relayed events' data, in order. From here on the response's
   * id and settings, its output items (their ids and indexes) and the numbering are the
   * upstream's, so that what this machine writes next reads as the rest of that one stream: a
   * continued text part gets its deltas and then its done events with the whole text. Returns
   * whether a text part is still open (the next text goes on in it), or undefined where the
   * stream cannot be gone on with: events but no `response.created`, an item other than a message
   * open, a part other than output text open.
   */
  resume(events: readonly unknown[]): { textOpen: boolean } | undefined {
    let base: Record<string, unknown> | undefined;
    let last = -1;
    const items: Record<string, unknown>[] = [];
    const open = new Set<number>();
    let part: { at: number; index: number } | undefined;
    const partOf = (at: unknown, index: unknown): Record<string, unknown> | undefined => {
      const item = typeof at === "number" ? items[at] : undefined;
      const content = item && Array.isArray(item.content) ? item.content : undefined;
      const p = content && typeof index === "number" ? content[index] : undefined;
      return isRecord(p) ? p : undefined;
    };
    for (const ev of events) {
      if (!isRecord(ev)) continue;
      if (typeof ev.sequence_number === "number" && ev.sequence_number > last) last = ev.sequence_number;
      const at = ev.output_index;
      switch (ev.type) {
        case "response.created":
        case "response.in_progress":
          if (isRecord(ev.response)) base = ev.response;
          break;
        case "response.output_item.added":
          if (typeof at === "number" && isRecord(ev.item)) {
            items[at] = structuredClone(ev.item);
            open.add(at);
          }
          break;
        case "response.output_item.done":
          if (typeof at === "number" && isRecord(ev.item)) {
            items[at] = ev.item;
            open.delete(at);
          }
          break;
        case "response.content_part.added": {
          const item = typeof at === "number" ? items[at] : undefined;
          if (!item || !isRecord(ev.part) || typeof ev.content_index !== "number") break;
          if (!Array.isArray(item.content)) item.content = [];
          (item.content as unknown[])[ev.content_index] = { ...ev.part };
          part = { at: at as number, index: ev.content_index };
          break;
        }
        case "response.output_text.delta": {
          const p = partOf(at, ev.content_index);
          if (p && typeof ev.delta === "string") p.text = `${typeof p.text === "string" ? p.text : ""}${ev.delta}`;
          break;
        }
        case "response.content_part.done": {
          const item = typeof at === "number" ? items[at] : undefined;
          if (item && Array.isArray(item.content) && isRecord(ev.part) && typeof ev.content_index === "number")
            item.content[ev.content_index] = ev.part;
          if (part?.at === at && part?.index === ev.content_index) part = undefined;
          break;
        }
        default:
          break;
      }
    }
    // Nothing reached the client yet: the stream is this machine's from its start.
    if (last === -1 && !base) return { textOpen: false };
    if (!base || typeof base.id !== "string") return undefined;
    for (let i = 0; i < items.length; i++) if (!items[i]) return undefined;
    if (open.size > 1) return undefined;
    const [k] = open;
    let textOpen = false;
    this.message = undefined;
    this.open = undefined;
    if (k !== undefined) {
      const item = items[k]!;
      if (item.type !== "message" || k !== items.length - 1) return undefined;
      // The vendor's message item, in the shape this machine writes into (its parts added as they came).
      const message = item as unknown as Message;
      this.message = { item: message, index: k };
      if (part?.at === k) {
        if (partOf(k, part.index)?.type !== "output_text") return undefined;
        const head = `${itemHead(message.id, k)},"content_index":${part.index}`;
        this.open = { kind: "text", item: message, index: k, part: part.index, head };
        textOpen = true;
      }
    }
    this.base = base;
    this.ctx.id = base.id;
    if (typeof base.created_at === "number") this.ctx.createdAt = base.created_at;
    this.output.length = 0;
    // The vendor's items as its client holds them (read leniently: they are relayed again as they are).
    this.output.push(...(items as unknown as ResponsesOutputItem[]));
    this.seq = last + 1;
    this.started = true;
    return { textOpen };
  }

  /** An in-band error: `error`, then `response.failed` with the output so far. Nothing follows. */
  fail(code: string, message: string): void {
    if (this.ended) return;
    this.begin();
    this.ended = true;
    this.emit("error", { code, message, param: null });
    const response = this.envelope("failed", null, { code, message });
    this.final = response;
    this.frame("response.failed", `"response":${JSON.stringify(response)}`);
  }

  /** The pivot stream ended: a stream that never stopped cleanly has already failed in-band. */
  end(): void {
    if (!this.ended) this.fail("server_error", "The upstream stream ended before the reply was complete.");
  }
}
