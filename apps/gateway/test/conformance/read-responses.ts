/**
 * Reads a Responses reply — JSON or stream — into an {@link Outcome}, asserting on the way the
 * wire rules a Responses client relies on (docs/protocols.md §5.2, §5.3). The stop is the
 * response's status: `completed`, or `incomplete:<reason>`.
 */
import { expect } from "bun:test";
import { parseRecord, type Outcome, type StreamError } from "./outcome";
import type { Frame } from "./read-messages";

/** A chat finish reason as the status a Responses client sees for the same end. */
export function responsesStop(finishReason: string): string {
  if (finishReason === "length") return "incomplete:max_output_tokens";
  if (finishReason === "content_filter") return "incomplete:content_filter";
  return "completed";
}

function usageOf(u: Record<string, any>): Outcome["usage"] {
  expect(u.total_tokens).toBe(u.input_tokens + u.output_tokens);
  expect(typeof u.input_tokens_details.cached_tokens).toBe("number");
  const out: Outcome["usage"] = { input: u.input_tokens, output: u.output_tokens };
  const reasoning = u.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number" && reasoning > 0) out.reasoning = reasoning;
  return out;
}

function stopOf(r: Record<string, any>): string {
  if (r.status === "completed") {
    expect(r.incomplete_details).toBeNull();
    return "completed";
  }
  expect(r.status).toBe("incomplete");
  return `incomplete:${r.incomplete_details.reason}`;
}

/** The outcome of a finished response object (a JSON reply, or a stream's last event). */
function outcomeOf(r: Record<string, any>, model: string): Outcome {
  expect(r.object).toBe("response");
  expect(r.id).toMatch(/^resp_/);
  expect(r.model).toBe(model);
  const items: Record<string, any>[] = r.output;
  const texts = items
    .filter((i) => i.type === "message")
    .flatMap((i) => i.content.map((p: any) => (p.type === "output_text" ? p.text : "")));
  const thinking = items.filter((i) => i.type === "reasoning").flatMap((i) => i.summary.map((s: any) => s.text));
  const calls = items.filter((i) => i.type === "function_call");
  for (const c of calls) expect(typeof c.arguments).toBe("string");
  return {
    text: texts.length > 0 ? texts.join("") : null,
    thinking: thinking.join(""),
    toolCalls: calls.map((c) => ({ id: c.call_id, name: c.name, args: JSON.parse(c.arguments) })),
    stop: stopOf(r),
    usage: usageOf(r.usage),
  };
}

export function readResponsesJson(body: Record<string, any>, model: string): Outcome {
  return outcomeOf(body, model);
}

export interface ResponsesStreamRead {
  outcome: Outcome;
  /** Set when the stream ended with `error` then `response.failed`. */
  error?: StreamError;
}

/**
 * A Responses stream: each frame's `event` is its data's `type`; `sequence_number`s run 0, 1, 2…;
 * `response.created` and `response.in_progress` first; deltas rebuild the text, reasoning
 * summary and call arguments, which must equal the items of the terminal event's response (what
 * the official client's stream helper returns); nothing follows the terminal event. An in-band
 * error is `error` followed by `response.failed`, last.
 */
export function readResponsesStream(frames: Frame[], model: string): ResponsesStreamRead {
  const events = frames.map((f) => {
    const d = parseRecord(f.data);
    expect(f.event).toBe(d.type);
    return d;
  });
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events[0]?.type).toBe("response.created");
  expect(events[1]?.type).toBe("response.in_progress");
  expect(events[0]?.response.model).toBe(model);
  let text: string | null = null;
  let thinking = "";
  const args = new Map<number, string>();
  for (const e of events) {
    if (e.type === "response.output_text.delta") text = (text ?? "") + e.delta;
    if (e.type === "response.reasoning_summary_text.delta") thinking += e.delta;
    if (e.type === "response.function_call_arguments.delta")
      args.set(e.output_index, (args.get(e.output_index) ?? "") + e.delta);
  }
  const last = events.at(-1)!;
  if (last.type === "response.failed") {
    const err = events.at(-2)!;
    expect(err.type).toBe("error");
    expect(last.response.status).toBe("failed");
    const outcome: Outcome = { text, thinking, toolCalls: [], stop: null, usage: { input: 0, output: 0 } };
    return { outcome, error: { type: err.code, message: err.message } };
  }
  expect(["response.completed", "response.incomplete"]).toContain(last.type);
  expect(
    events.filter(
      (e) => e.type.startsWith("response.") && ["completed", "incomplete", "failed"].includes(e.type.slice(9)),
    ),
  ).toHaveLength(1);
  const outcome = outcomeOf(last.response, model);
  // What the deltas built is what the final response holds.
  expect(text).toBe(outcome.text);
  expect(thinking).toBe(outcome.thinking);
  expect([...args.values()].map((a) => JSON.parse(a))).toEqual(outcome.toolCalls.map((c) => c.args));
  return { outcome };
}
