/**
 * Reads a chat-completions reply — JSON or stream — into an {@link Outcome}, asserting on the way
 * the wire rules a chat-completions client relies on (docs/protocols.md §2.4, §2.6, §4.6).
 */
import { expect } from "bun:test";
import { parseRecord, type Outcome, type StreamError, type ToolCallOutcome } from "./outcome";
import type { Frame } from "./read-messages";

function usageOf(u: Record<string, any>): Outcome["usage"] {
  expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
  const out: Outcome["usage"] = { input: u.prompt_tokens, output: u.completion_tokens };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number" && reasoning > 0) out.reasoning = reasoning;
  return out;
}

function toolCallsOf(calls: Record<string, any>[] | undefined): ToolCallOutcome[] {
  return (calls ?? []).map((c) => {
    expect(c.type).toBe("function");
    expect(typeof c.function.arguments).toBe("string");
    return { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) };
  });
}

/** A chat-completions JSON reply. */
export function readChatJson(body: Record<string, any>, model: string): Outcome {
  expect(body.object).toBe("chat.completion");
  expect(body.id).toMatch(/^chatcmpl-/);
  expect(body.model).toBe(model);
  expect(body.choices).toHaveLength(1);
  const choice = body.choices[0];
  expect(choice.index).toBe(0);
  expect(choice.message.role).toBe("assistant");
  return {
    text: choice.message.content,
    thinking: choice.message.reasoning_content ?? "",
    toolCalls: toolCallsOf(choice.message.tool_calls),
    stop: choice.finish_reason,
    usage: usageOf(body.usage),
  };
}

export interface ChatStreamRead {
  /** The completion the stream builds, as the official client's accumulator builds it. */
  outcome: Outcome;
  /** Set when the stream ended with an in-band `{"error": …}` chunk. */
  error?: StreamError;
  /** Whether a `choices: []` usage chunk came. */
  usageChunk: boolean;
}

/**
 * A chat-completions stream: `data:` lines only, `data: [DONE]` last; one id (`chatcmpl-…`),
 * object and model on every chunk; the first chunk carries the role; each tool call opens with
 * `index` = its ordinal (0, 1, 2… in order), id, type and name, and later deltas add argument
 * fragments; `finish_reason` once, on the last choice chunk; then only the usage chunk
 * (`choices: []`, when asked for). An in-band error is followed only by `[DONE]` and comes
 * instead of any `finish_reason`. Content is rebuilt as the official client does: it stays null
 * until a non-null `delta.content` arrives.
 */
export function readChatStream(frames: Frame[], model: string): ChatStreamRead {
  for (const f of frames) expect(f.event).toBeUndefined();
  expect(frames.at(-1)?.data).toBe("[DONE]");
  expect(frames.filter((f) => f.data === "[DONE]")).toHaveLength(1);
  const chunks = frames.slice(0, -1).map((f) => parseRecord(f.data));

  let text: string | null = null;
  let thinking = "";
  let role: string | undefined;
  let stop: string | null = null;
  let usage: Outcome["usage"] | undefined;
  let usageChunk = false;
  let error: StreamError | undefined;
  const calls: { id: string; name: string; args: string }[] = [];
  let id: string | undefined;
  for (const [i, c] of chunks.entries()) {
    const last = i === chunks.length - 1;
    if (c.error !== undefined) {
      expect(last).toBe(true); // then only [DONE]
      expect(stop).toBeNull(); // an interrupted reply never looks finished
      expect(c.error.param).toBeNull();
      error = { type: c.error.type, code: c.error.code, message: c.error.message };
      continue;
    }
    id ??= c.id;
    expect(c.id).toBe(id);
    expect(c.object).toBe("chat.completion.chunk");
    expect(c.model).toBe(model);
    if (c.choices.length === 0) {
      expect(c.usage).toBeDefined(); // the usage chunk, after the finish
      expect(stop).not.toBeNull();
      usageChunk = true;
      usage = usageOf(c.usage);
      continue;
    }
    expect(stop).toBeNull(); // nothing after the finish but the usage chunk
    expect(c.choices).toHaveLength(1);
    const choice = c.choices[0];
    expect(choice.index).toBe(0);
    const d = choice.delta;
    if (i === 0) expect(d.role).toBe("assistant");
    if (d.role) role = d.role;
    if (d.content != null) text = (text ?? "") + d.content;
    if (typeof d.reasoning_content === "string") thinking += d.reasoning_content;
    for (const t of d.tool_calls ?? []) {
      if (t.index === calls.length) {
        // A new call: its ordinal, id, type and name come first (§4.6, §4.9 trap 9).
        expect(typeof t.id).toBe("string");
        expect(t.type).toBe("function");
        expect(typeof t.function.name).toBe("string");
        calls.push({ id: t.id, name: t.function.name, args: t.function.arguments ?? "" });
      } else {
        expect(t.index).toBeLessThan(calls.length);
        expect(t.id).toBeUndefined();
        calls[t.index]!.args += t.function.arguments ?? "";
      }
    }
    if (choice.finish_reason != null) stop = choice.finish_reason;
  }
  expect(role).toBe("assistant");
  const outcome: Outcome = {
    text,
    thinking,
    toolCalls: calls.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args) })),
    stop,
    usage: usage ?? { input: 0, output: 0 },
  };
  const read: ChatStreamRead = { outcome, usageChunk };
  if (error) read.error = error;
  return read;
}
