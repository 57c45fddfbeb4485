/**
 * Reads a generateContent reply — JSON or stream — into an {@link Outcome}, asserting on the way
 * the wire rules a client of the format relies on (docs/protocols.md §6): one candidate of role
 * `model`, `modelVersion` = the catalog id, `usageMetadata` whose total adds up; a stream's chunks
 * rebuild the reply (text and thoughts concatenated, calls whole), its last chunk carries the
 * `finishReason` and the usage, and nothing follows it. An in-band error is `{"error": …}`, last.
 */
import { expect } from "bun:test";
import { parseRecord, type Outcome, type StreamError } from "./outcome";
import type { Frame } from "./read-messages";

/** The finish a client of this format sees for an expectation's messages-format stop. */
export function generateStop(stopReason: string): string {
  if (stopReason === "max_tokens") return "MAX_TOKENS";
  if (stopReason === "refusal") return "SAFETY";
  return "STOP";
}

function usageOf(u: Record<string, any>): Outcome["usage"] {
  const thoughts = u.thoughtsTokenCount ?? 0;
  const candidates = u.candidatesTokenCount ?? 0;
  expect(u.totalTokenCount).toBe(u.promptTokenCount + candidates + thoughts);
  const out: Outcome["usage"] = { input: u.promptTokenCount, output: candidates + thoughts };
  if (thoughts > 0) out.reasoning = thoughts;
  return out;
}

interface Built {
  text: string;
  thinking: string;
  calls: { id: string; name: string; args: unknown }[];
}

/** Adds one candidate's parts to what is built. */
function addParts(b: Built, parts: Record<string, any>[]): void {
  for (const p of parts) {
    if (p.functionCall) {
      expect(typeof p.functionCall.args).toBe("object");
      b.calls.push({ id: p.functionCall.id, name: p.functionCall.name, args: p.functionCall.args });
    } else if (p.thought === true) b.thinking += p.text;
    else if (typeof p.text === "string") b.text += p.text;
  }
}

function outcome(b: Built, finishReason: string | undefined, usage: Record<string, any>): Outcome {
  return {
    text: b.text === "" ? null : b.text,
    thinking: b.thinking,
    toolCalls: b.calls,
    stop: finishReason ?? null,
    usage: usageOf(usage),
  };
}

export function readGenerateJson(body: Record<string, any>, model: string): Outcome {
  expect(body.modelVersion).toBe(model);
  expect(body.candidates).toHaveLength(1);
  const c = body.candidates[0];
  const b: Built = { text: "", thinking: "", calls: [] };
  if (c.content) {
    expect(c.content.role).toBe("model");
    addParts(b, c.content.parts ?? []);
  }
  return outcome(b, c.finishReason, body.usageMetadata);
}

export interface GenerateStreamRead {
  outcome: Outcome;
  error?: StreamError;
}

export function readGenerateStream(frames: Frame[], model: string): GenerateStreamRead {
  const chunks = frames.map((f) => {
    expect(f.event).toBeUndefined();
    return parseRecord(f.data);
  });
  const b: Built = { text: "", thinking: "", calls: [] };
  const last = chunks.at(-1)!;
  if (last.error) {
    for (const c of chunks.slice(0, -1)) addParts(b, c.candidates?.[0]?.content?.parts ?? []);
    expect(typeof last.error.code).toBe("number");
    const outcomeSoFar: Outcome = {
      text: b.text,
      thinking: b.thinking,
      toolCalls: [],
      stop: null,
      usage: { input: 0, output: 0 },
    };
    return { outcome: outcomeSoFar, error: { type: last.error.status, message: last.error.message } };
  }
  let finish: string | undefined;
  chunks.forEach((c, i) => {
    expect(c.modelVersion).toBe(model);
    const cand = c.candidates?.[0];
    // Only the last chunk says how the reply ended.
    if (cand?.finishReason !== undefined) {
      expect(i).toBe(chunks.length - 1);
      finish = cand.finishReason;
    }
    addParts(b, cand?.content?.parts ?? []);
  });
  expect(finish).toBeDefined();
  return { outcome: outcome(b, finish, last.usageMetadata) };
}
