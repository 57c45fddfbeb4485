/**
 * Chat-completions stream (decoded SSE) → messages-format events: the state machine of
 * docs/protocols.md §4.5, with the traps of §4.9 handled:
 * - delta order reasoning → content → tool_calls, so blocks come out thinking, text, tool_use;
 * - `content: ""`/`null` and `tool_calls: []` open nothing (traps 2, 3);
 * - a tool call's arguments in its opening chunk are never dropped (trap 1);
 * - tool calls are matched by id, then index, then "the latest"; indexes need not start at 0;
 * - fragments of interleaved parallel calls are buffered so blocks stay sequential: the open
 *   call keeps its block until its arguments parse as complete JSON, later calls wait;
 * - the finish chunk may also carry content (processed first, trap 4);
 * - `message_delta` is held until the usage chunk (trap 5); usage on every chunk is just
 *   remembered, never taken as the end (trap 6);
 * - chunks with empty `choices` and no usage (Azure prompt filter) are skipped.
 *
 * Ends: `[DONE]`, or EOF after a `finish_reason`, completes the message (a missing finish
 * before `[DONE]` is synthesized as `end_turn`/`tool_use`, §4.5 step 5). EOF with neither
 * `[DONE]` nor a finish is an interrupted stream: an in-band `api_error`, no `message_stop`, so
 * the client does not take a cut-off reply (or half a tool call) for a complete one.
 */
import type { MessagesStreamEvent } from "@turnpike/schema";
import { MachineStream } from "../stream-transformer.js";
import type { SSEMessage } from "@turnpike/schema/sse";
import { GatewayError } from "../errors.js";
import { chatStreamErrorToGatewayError } from "../upstream-errors.js";
import { randomId, sanitizeToolId } from "../ids.js";
import { isRecord, tryParseJson } from "../json.js";
import { MessagesEventBuilder, type MessagesStreamContext } from "../messages/messages-event-builder.js";
import { chatUsageToTotals, type UsageTotals } from "../usage.js";
import { mapChatFinishReason } from "./map-chat-finish-reason.js";
import { restoreToolName } from "./tool-names.js";

export interface ChatStreamContext extends MessagesStreamContext {
  /** The request's stop sequences (see stop-sequence.ts for when a match is reported). */
  stopSequences?: readonly string[] | undefined;
  /** Upstream tool name → client tool name (from the request converter). */
  toolNames?: Record<string, string> | undefined;
}

interface ToolCallState {
  id: string | undefined;
  name: string | undefined;
  /** All argument text received. */
  args: string;
  /** Argument text not yet emitted. */
  pending: string;
  opened: boolean;
  closed: boolean;
}

/** A messages-event stream that also exposes the best-known usage at any time. */
export class ChatToMessagesEventStream extends MachineStream<SSEMessage, MessagesStreamEvent, ChatToMessagesMachine> {
  constructor(ctx: ChatStreamContext) {
    super((emit) => new ChatToMessagesMachine(ctx, emit));
  }
}

/**
 * @example
 * ```ts
 * const events = upstream.body!
 *   .pipeThrough(new SSEDecoderStream())
 *   .pipeThrough(chatStreamToMessagesEvents({ model: "beta-4o", inputTokens: 812, onUsage: bill }));
 * ```
 */
export function chatStreamToMessagesEvents(ctx: ChatStreamContext): ChatToMessagesEventStream {
  return new ChatToMessagesEventStream(ctx);
}

export class ChatToMessagesMachine {
  private readonly b: MessagesEventBuilder;
  private readonly calls: ToolCallState[] = [];
  private readonly byIndex = new Map<number, ToolCallState>();
  private readonly byId = new Map<string, ToolCallState>();
  private current: ToolCallState | null = null;
  private finishReason: string | null = null;
  private namedStop: unknown;
  private finishSent = false;

  constructor(
    private readonly ctx: ChatStreamContext,
    emit: (ev: MessagesStreamEvent) => void,
  ) {
    this.b = new MessagesEventBuilder(emit, ctx);
  }

  usage(): UsageTotals {
    return this.b.usage();
  }

  push(msg: SSEMessage): void {
    if (this.b.isEnded) return;
    if (msg.data === "[DONE]") {
      this.complete(true);
      return;
    }
    const chunk = tryParseJson(msg.data);
    if (msg.event === "error" || (isRecord(chunk) && chunk.error !== undefined && chunk.error !== null)) {
      const body = isRecord(chunk) ? (chunk.error ?? chunk) : { message: msg.data };
      this.b.error(chatStreamErrorToGatewayError(body));
      return;
    }
    if (!isRecord(chunk)) {
      this.b.error(
        new GatewayError({
          status: 502,
          type: "api_error",
          message: `The upstream sent a stream chunk that is not JSON: ${msg.data.slice(0, 120)}`,
        }),
      );
      return;
    }
    this.b.start(chunk.id);
    if (isRecord(chunk.usage)) this.b.setUsage(chatUsageToTotals(chunk.usage));

    const choices = Array.isArray(chunk.choices) ? chunk.choices.filter(isRecord) : [];
    const choice = choices.find((c) => c.index === 0) ?? choices[0];
    if (!choice) {
      // The usage chunk (`choices: []`) releases the held message_delta (§4.5 step 4).
      if (isRecord(chunk.usage) && this.finishReason !== null) this.sendFinish();
      return;
    }
    if (this.finishSent) return; // nothing may follow message_delta but message_stop
    const delta = isRecord(choice.delta) ? choice.delta : {};

    const reasoning =
      typeof delta.reasoning_content === "string"
        ? delta.reasoning_content
        : typeof delta.reasoning === "string"
          ? delta.reasoning
          : "";
    if (reasoning) {
      this.closeCurrentTool();
      this.b.thinking(reasoning);
    }
    if (typeof delta.content === "string" && delta.content.length > 0) {
      this.closeCurrentTool();
      this.b.text(delta.content);
    }
    if (typeof delta.refusal === "string" && delta.refusal.length > 0) {
      this.closeCurrentTool();
      this.b.text(delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const tc of delta.tool_calls) if (isRecord(tc)) this.toolDelta(tc);
      this.pump();
    }
    if (isRecord(delta.function_call)) {
      // Legacy function_call deltas: one call, no index.
      this.toolDelta({
        index: -1,
        ...(this.calls.length === 0 ? { id: randomId("call_") } : {}),
        function: delta.function_call,
      });
      this.pump();
    }

    if (typeof choice.finish_reason === "string" && this.finishReason === null) {
      this.finishReason = choice.finish_reason;
      this.namedStop = choice.stop_reason ?? choice.matched_stop;
      this.flushTools();
      this.b.closeOpen();
    }
  }

  /** Upstream EOF. */
  end(): void {
    this.complete(false);
  }

  /** The client went away: report usage so far. */
  cancel(): void {
    this.b.reportUsage();
  }

  private complete(sawDone: boolean): void {
    if (this.b.isEnded) return;
    if (this.finishReason === null && !sawDone) {
      this.b.error(
        new GatewayError({
          status: 502,
          type: "api_error",
          message: "The upstream stream ended before the reply was complete (no finish_reason and no [DONE])",
        }),
      );
      return;
    }
    if (this.finishReason === null) {
      // [DONE] without a finish: synthesize one (§4.5 step 5).
      this.flushTools();
      this.finishReason = this.b.toolUsed ? "tool_calls" : "stop";
    }
    this.sendFinish();
    this.b.stop();
  }

  private sendFinish(): void {
    if (this.finishSent) return;
    this.finishSent = true;
    this.flushTools();
    let reason = mapChatFinishReason(this.finishReason);
    let sequence: string | null = null;
    const named = this.namedStop;
    if (reason === "end_turn" && typeof named === "string" && this.ctx.stopSequences?.includes(named)) {
      reason = "stop_sequence";
      sequence = named;
    }
    this.b.finish(reason, sequence);
  }

  // ---- tool calls ----------------------------------------------------------------------------

  private toolDelta(tc: Record<string, unknown>): void {
    const index = typeof tc.index === "number" ? tc.index : undefined;
    const id = typeof tc.id === "string" && tc.id.length > 0 ? tc.id : undefined;
    const fn = isRecord(tc.function) ? tc.function : {};
    const call = this.resolve(index, id);
    if (id && !call.id) {
      call.id = id;
      this.byId.set(id, call);
    }
    if (typeof fn.name === "string" && fn.name.length > 0 && !call.name) call.name = fn.name;
    if (typeof fn.arguments === "string" && fn.arguments.length > 0) {
      if (call.closed) return; // a fragment after the call's block closed; see README "Streams"
      call.args += fn.arguments;
      call.pending += fn.arguments;
    }
  }

  /** By id if known; else by index (unless the index now carries a different id); else the latest. */
  private resolve(index: number | undefined, id: string | undefined): ToolCallState {
    if (id) {
      const known = this.byId.get(id);
      if (known) return known;
    }
    if (index !== undefined) {
      const known = this.byIndex.get(index);
      if (known && !(id && known.id && known.id !== id)) return known;
    } else if (!id) {
      const last = this.calls[this.calls.length - 1];
      if (last) return last;
    }
    const call: ToolCallState = { id, name: undefined, args: "", pending: "", opened: false, closed: false };
    this.calls.push(call);
    if (index !== undefined) this.byIndex.set(index, call);
    if (id) this.byId.set(id, call);
    return call;
  }

  /** Emits what can be emitted now, keeping blocks sequential. */
  private pump(): void {
    for (;;) {
      const cur = this.current;
      if (cur) {
        if (cur.pending) {
          this.b.toolArguments(cur.pending);
          cur.pending = "";
        }
        const next = this.nextWaiting();
        if (!next || !isCompleteJson(cur.args)) return;
        this.closeCurrentTool();
        continue;
      }
      const next = this.nextWaiting();
      if (!next || this.b.isEnded) return;
      this.openCall(next);
    }
  }

  private nextWaiting(): ToolCallState | undefined {
    return this.calls.find((c) => !c.opened && c.name !== undefined);
  }

  private openCall(call: ToolCallState): void {
    call.opened = true;
    this.b.openTool(sanitizeToolId(call.id), restoreToolName(call.name ?? "", this.ctx.toolNames));
    this.current = call;
  }

  private closeCurrentTool(): void {
    if (!this.current) return;
    this.current.closed = true;
    this.current = null;
    if (this.b.openKind === "tool") this.b.closeOpen();
  }

  /** At the finish: every call gets its block, in order, with all its arguments. */
  private flushTools(): void {
    for (;;) {
      if (this.current) {
        if (this.current.pending) this.b.toolArguments(this.current.pending);
        this.current.pending = "";
        this.closeCurrentTool();
      }
      const next = this.calls.find((c) => !c.opened);
      if (!next) return;
      if (next.name === undefined) next.name = "";
      this.openCall(next);
    }
  }
}

function isCompleteJson(text: string): boolean {
  if (text.trim() === "") return false;
  return tryParseJson(text) !== undefined;
}
