/**
 * A Responses upstream's stream → pivot events, through the chat stream machine: each Responses
 * event that carries output is re-told as the chat chunk that carries the same (text, refusal,
 * reasoning summary, a tool call's opening and argument fragments), and the terminal event as the
 * finish chunk, the usage chunk and `[DONE]`. The chat machine's rules for tool names, parallel
 * calls, stop sequences, interrupted streams and in-band errors then hold unchanged.
 */
import type { MessagesStreamEvent } from "@turnpike/schema";
import type { SSEMessage } from "@turnpike/schema/sse";
import { ChatToMessagesMachine, type ChatStreamContext } from "../chat/chat-stream-to-messages-events.js";
import { isRecord, tryParseJson } from "../json.js";
import { finishReasonOf } from "./convert-responses-response-to-chat.js";
import { responsesUsageToChat } from "./responses-usage.js";

/** One function call of the stream: its chat tool-call index and the argument text sent so far. */
interface Call {
  index: number;
  sent: string;
}

const TERMINAL = new Set(["response.completed", "response.incomplete"]);

export class ResponsesToMessagesMachine {
  private readonly chat: ChatToMessagesMachine;
  /** Function calls by output index. */
  private readonly calls = new Map<number, Call>();
  private failed = false;

  constructor(ctx: ChatStreamContext, emit: (ev: MessagesStreamEvent) => void) {
    this.chat = new ChatToMessagesMachine(ctx, emit);
  }

  private delta(delta: Record<string, unknown>): void {
    this.chat.push({ data: JSON.stringify({ choices: [{ index: 0, delta }] }) });
  }

  private args(call: Call, text: string): void {
    if (!text) return;
    call.sent += text;
    this.delta({ tool_calls: [{ index: call.index, function: { arguments: text } }] });
  }

  push(msg: SSEMessage): void {
    if (this.failed) return;
    const ev = tryParseJson(msg.data);
    if (!isRecord(ev)) {
      this.chat.push(msg); // not JSON: the chat machine ends the stream with its in-band error
      return;
    }
    const type = typeof ev.type === "string" ? ev.type : msg.event;
    const at = typeof ev.output_index === "number" ? ev.output_index : -1;
    switch (type) {
      case "response.output_text.delta":
        if (typeof ev.delta === "string") this.delta({ content: ev.delta });
        return;
      case "response.refusal.delta":
        if (typeof ev.delta === "string") this.delta({ refusal: ev.delta });
        return;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        if (typeof ev.delta === "string") this.delta({ reasoning_content: ev.delta });
        return;
      case "response.output_item.added": {
        const item = isRecord(ev.item) ? ev.item : {};
        if (item.type !== "function_call") return;
        const call: Call = { index: this.calls.size, sent: "" };
        this.calls.set(at, call);
        this.delta({
          tool_calls: [
            { index: call.index, id: item.call_id, type: "function", function: { name: item.name, arguments: "" } },
          ],
        });
        this.args(call, typeof item.arguments === "string" ? item.arguments : "");
        return;
      }
      case "response.function_call_arguments.delta": {
        const call = this.calls.get(at);
        if (call && typeof ev.delta === "string") this.args(call, ev.delta);
        return;
      }
      case "response.function_call_arguments.done":
      case "response.output_item.done": {
        // A vendor that sends a call's arguments whole, only at its end: what was not sent yet.
        const call = this.calls.get(at);
        const whole =
          typeof ev.arguments === "string"
            ? ev.arguments
            : isRecord(ev.item) && typeof ev.item.arguments === "string"
              ? ev.item.arguments
              : undefined;
        if (call && whole?.startsWith(call.sent)) this.args(call, whole.slice(call.sent.length));
        return;
      }
      case "error":
        this.fail({ message: ev.message, type: "server_error", code: ev.code });
        return;
      case "response.failed": {
        const response = isRecord(ev.response) ? ev.response : {};
        const error = isRecord(response.error) ? response.error : {};
        this.fail({
          message: error.message ?? "The upstream failed the response.",
          type: "server_error",
          code: error.code,
        });
        return;
      }
      default:
        if (type === undefined || !TERMINAL.has(type)) return;
        this.finish(isRecord(ev.response) ? ev.response : {});
    }
  }

  private finish(response: Record<string, unknown>): void {
    this.chat.push({
      data: JSON.stringify({
        choices: [{ index: 0, delta: {}, finish_reason: finishReasonOf(response, this.calls.size > 0) }],
      }),
    });
    if (isRecord(response.usage))
      this.chat.push({ data: JSON.stringify({ choices: [], usage: responsesUsageToChat(response.usage) }) });
    this.chat.push({ data: "[DONE]" });
  }

  private fail(error: Record<string, unknown>): void {
    this.failed = true;
    this.chat.push({ data: JSON.stringify({ error }) });
  }

  /** Upstream EOF. */
  end(): void {
    this.chat.end();
  }
}
