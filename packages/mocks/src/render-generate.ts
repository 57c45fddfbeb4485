/**
 * A {@link MockReply} as the generateContent format (docs/protocols.md §6): the JSON reply, or
 * its chunks — `data:` frames with `?alt=sse`, else the elements of one JSON array — the last of
 * which carries the `finishReason` and the `usageMetadata`, as the gateway writes them.
 */
import type {
  GenerateErrorBody,
  GenerateReplyPart,
  GenerateRequest,
  GenerateResponse,
  StopReason,
} from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";
import { estimateTokens, splitText } from "./estimate-tokens.js";
import type { MockError, MockReply } from "./mock-reply.js";
import { DEFAULT_TEXT, errorMessage } from "./render-messages.js";

/** Stop reason → the format's finish reason (a function call ends with `STOP` there). */
const FINISH_REASON: Record<StopReason, string> = {
  end_turn: "STOP",
  stop_sequence: "STOP",
  pause_turn: "STOP",
  tool_use: "STOP",
  max_tokens: "MAX_TOKENS",
  model_context_window_exceeded: "MAX_TOKENS",
  refusal: "SAFETY",
};

/** The format's status word of an HTTP status. */
export function generateStatus(status: number): string {
  const words: Record<number, string> = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
  };
  return words[status] ?? (status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION");
}

/** The format's error envelope; a 402 is a 429 and a 529 a 503 there, as at the gateway. */
export function renderGenerateError(error: MockError): { status: number; body: GenerateErrorBody } {
  const status = error.status === 402 ? 429 : error.status === 529 ? 503 : error.status;
  return { status, body: { error: { code: status, message: errorMessage(error), status: generateStatus(status) } } };
}

/** The complete reply of `:generateContent`. */
export function renderGenerateResponse(
  reply: MockReply,
  request: GenerateRequest,
  id: string,
  model: string,
): GenerateResponse {
  const parts: GenerateReplyPart[] = [];
  if (reply.thinking) parts.push({ text: reply.thinking, thought: true });
  const text = reply.text ?? (reply.toolCalls?.length ? undefined : DEFAULT_TEXT);
  if (text !== undefined) parts.push({ text });
  reply.toolCalls?.forEach((call, i) =>
    parts.push({ functionCall: { id: call.id ?? `toolu_mock_${id}_${i}`, name: call.name, args: call.input } }),
  );
  const prompt =
    reply.usage?.input_tokens ??
    estimateTokens(JSON.stringify(request.contents) + JSON.stringify(request.systemInstruction ?? ""));
  const thoughts = reply.thinking ? estimateTokens(reply.thinking) : 0;
  const output =
    reply.usage?.output_tokens ?? estimateTokens((text ?? "") + JSON.stringify(reply.toolCalls ?? [])) + thoughts;
  const stop = reply.stopReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn");
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: FINISH_REASON[stop], index: 0 }],
    usageMetadata: {
      promptTokenCount: prompt,
      candidatesTokenCount: output - Math.min(thoughts, output),
      totalTokenCount: prompt + output,
      ...(thoughts ? { thoughtsTokenCount: Math.min(thoughts, output) } : {}),
    },
    modelVersion: model,
    responseId: `gen_mock_${id}`,
  };
}

/** The chunks of a streamed reply: SSE frames (`sse`), or the pieces of one JSON array. */
export function renderGenerateFrames(reply: MockReply, response: GenerateResponse, sse: boolean): string[] {
  const candidate = response.candidates[0];
  const parts = candidate?.content.parts ?? [];
  // Text and thoughts in word-sized pieces; a function call whole, as the format streams it.
  const pieces: GenerateReplyPart[] = parts.flatMap((p) =>
    p.functionCall ? [p] : splitText(p.text ?? "").map((t) => ({ ...p, text: t })),
  );
  if (pieces.length === 0) pieces.push({ text: "" });
  const chunks = pieces.map((p, i): GenerateResponse => {
    const last = i === pieces.length - 1;
    const { usageMetadata: _usage, ...rest } = response;
    return {
      ...rest,
      candidates: [
        {
          content: { role: "model", parts: [p] },
          ...(last ? { finishReason: candidate?.finishReason ?? "STOP" } : {}),
          index: 0,
        },
      ],
      ...(last ? { usageMetadata: response.usageMetadata } : {}),
    };
  });
  let json = chunks.map((c) => JSON.stringify(c));
  const failure = reply.streamError;
  if (failure) json = [...json.slice(0, failure.afterEvents ?? 1), JSON.stringify(renderGenerateError(failure).body)];
  if (sse) return json.map((data) => formatSSE({ data }));
  return [...json.map((data, i) => `${i === 0 ? "[" : ",\r\n"}${data}`), "]"];
}
