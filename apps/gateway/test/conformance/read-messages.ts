/**
 * Reads a messages-format reply — JSON or stream — into an {@link Outcome}, asserting on the way
 * the wire rules a messages-format client relies on (docs/protocols.md §1.4, §1.7, §4.9 traps 7–9).
 */
import { expect } from "bun:test";
import { parseRecord, type Outcome, type StreamError, type ToolCallOutcome } from "./outcome";

export interface Frame {
  event?: string;
  data: string;
}

function usageOf(u: Record<string, any>): Outcome["usage"] {
  const out: Outcome["usage"] = {
    input: u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
    output: u.output_tokens,
  };
  const reasoning = u.output_tokens_details?.thinking_tokens;
  if (typeof reasoning === "number" && reasoning > 0) out.reasoning = reasoning;
  return out;
}

function outcomeOfContent(
  content: Record<string, any>[],
  stop: string | null,
  stopSequence: string | null,
  usage: Outcome["usage"],
): Outcome {
  const text: string[] = content.filter((b) => b.type === "text").map((b) => b.text);
  const thinking = content.filter((b) => b.type === "thinking");
  const toolCalls: ToolCallOutcome[] = content
    .filter((b) => b.type === "tool_use")
    .map((b) => ({ id: b.id, name: b.name, args: b.input }));
  return {
    text: text.length > 0 ? text.join("") : null,
    thinking: thinking.map((b) => b.thinking).join(""),
    signatures: thinking.map((b) => b.signature),
    blocks: content.map((b) => b.type),
    toolCalls,
    stop,
    stopSequence,
    usage,
  };
}

/** A messages-format JSON reply. */
export function readMessagesJson(body: Record<string, any>, model: string): Outcome {
  expect(body.type).toBe("message");
  expect(body.role).toBe("assistant");
  expect(body.id).toMatch(/^msg_/);
  expect(body.model).toBe(model);
  expect(Array.isArray(body.content)).toBe(true);
  for (const b of body.content) if (b.type === "text") expect(b.text.length).toBeGreaterThan(0); // §4.9 trap 11
  return outcomeOfContent(body.content, body.stop_reason, body.stop_sequence, usageOf(body.usage));
}

export interface MessagesStreamRead {
  /** The message the stream builds, as the official client's accumulator builds it. */
  outcome: Outcome;
  /** `message_start.usage.input_tokens` (+ cache fields). */
  startInput: number;
  /** `input_tokens` of the last `message_delta`, when it states one. */
  deltaInput: number | undefined;
  /** Set when the stream ended with an `error` event. */
  error?: StreamError;
}

/**
 * A messages-format stream: every frame names its event and the name equals the JSON `type`;
 * `message_start` first; blocks open, receive deltas of their own index and close, one at a time,
 * with indexes 0, 1, 2… in order; `message_delta` after the last block; `message_stop` or an
 * `error` event is the very last frame. The content is rebuilt as the official client does
 * (a tool block's `partial_json` fragments parsed once the block stops; usage of `message_delta`
 * overwriting that of `message_start`).
 */
export function readMessagesStream(frames: Frame[], model: string): MessagesStreamRead {
  const events = frames.map((f) => {
    const ev = parseRecord(f.data);
    expect(f.event).toBe(ev.type); // §4.9 trap 7: the SDK dispatches on the event line
    return ev;
  });
  const visible = events.filter((e) => e.type !== "ping");
  const start = visible[0]!;
  expect(start.type).toBe("message_start");
  expect(start.message.id).toMatch(/^msg_/);
  expect(start.message.model).toBe(model);
  expect(start.message.content).toEqual([]);
  expect(start.message.stop_reason).toBeNull();
  expect(events.filter((e) => e.type === "message_start")).toHaveLength(1);

  const content: Record<string, any>[] = [];
  const json: string[] = [];
  let open: number | undefined;
  let stop: string | null = null;
  let stopSequence: string | null = null;
  let usage = usageOf(start.message.usage);
  const startInput = usage.input;
  let deltaInput: number | undefined;
  let sawDelta = false;
  let error: StreamError | undefined;
  for (const [i, ev] of visible.entries()) {
    if (i === 0) continue;
    const last = i === visible.length - 1;
    switch (ev.type) {
      case "content_block_start":
        expect(open).toBeUndefined(); // one block at a time
        expect(sawDelta).toBe(false);
        expect(ev.index).toBe(content.length); // contiguous, in order (§4.9 trap 9)
        content.push({ ...ev.content_block });
        json.push("");
        open = ev.index;
        if (ev.content_block.type === "tool_use") {
          expect(ev.content_block.input).toEqual({});
          expect(ev.content_block.id).toMatch(/^[A-Za-z0-9_-]+$/);
        }
        break;
      case "content_block_delta": {
        expect(ev.index).toBe(open);
        const b = content[ev.index]!;
        const d = ev.delta;
        if (d.type === "text_delta") b.text += d.text;
        else if (d.type === "thinking_delta") b.thinking += d.thinking;
        else if (d.type === "signature_delta") b.signature = d.signature;
        else if (d.type === "input_json_delta") json[ev.index] += d.partial_json;
        else throw new Error(`unexpected delta ${d.type}`);
        break;
      }
      case "content_block_stop": {
        expect(ev.index).toBe(open);
        const b = content[ev.index]!;
        if (b.type === "tool_use") b.input = json[ev.index] === "" ? {} : JSON.parse(json[ev.index]!);
        open = undefined;
        break;
      }
      case "message_delta": {
        expect(open).toBeUndefined();
        sawDelta = true;
        stop = ev.delta.stop_reason;
        stopSequence = ev.delta.stop_sequence ?? null;
        // Cumulative totals: each field present overwrites (§1.6; Bedrock-style deltas omit input).
        const next = usageOf({ input_tokens: 0, ...ev.usage });
        if (ev.usage.input_tokens !== undefined) deltaInput = next.input;
        usage = { ...next, input: deltaInput ?? usage.input };
        break;
      }
      case "message_stop":
        expect(sawDelta).toBe(true);
        expect(last).toBe(true); // nothing after message_stop
        break;
      case "error":
        expect(last).toBe(true); // nothing after an in-band error, and no message_stop
        error = { type: ev.error.type, message: ev.error.message };
        break;
      default:
        throw new Error(`unexpected event ${ev.type}`);
    }
  }
  const end = visible.at(-1)!.type;
  expect(["message_stop", "error"]).toContain(end);
  const read: MessagesStreamRead = {
    outcome: outcomeOfContent(content, stop, stopSequence, usage),
    startInput,
    deltaInput,
  };
  if (error) read.error = error;
  return read;
}
