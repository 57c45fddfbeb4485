import type { Protocol } from "./simulator-options";

/** Where a cut falls: after the N-th delta of this kind of content. */
export type CutIn = "text" | "tool" | "thinking";
/** How a stream is cut: the connection dropped, the stream gone quiet, an in-band error, or a clean end with no terminal event. */
export type CutKind = "reset" | "idle" | "error" | "truncate";

export const CUT_INS: readonly string[] = ["text", "tool", "thinking"];
export const CUT_KINDS: readonly string[] = ["reset", "idle", "error", "truncate"];

/** Each protocol's in-band error frames, as its vendor writes them mid-stream. */
const ERROR_FRAMES: Record<Protocol, string> = {
  messages: `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
  chat: `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\ndata: [DONE]\n\n`,
  responses: `event: error\ndata: {"type":"error","code":"server_error","message":"The server had an error while processing your request.","param":null,"sequence_number":999999}\n\n`,
  generate: `data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}\r\n\r\n`,
};

/**
 * Which kind of content delta one SSE frame carries, by a search of its text (the simulator's own
 * frames are compact JSON): undefined for any other frame.
 */
function deltaKind(protocol: Protocol, frame: string): CutIn | undefined {
  switch (protocol) {
    case "messages":
      if (frame.includes('"text_delta"')) return "text";
      if (frame.includes('"input_json_delta"')) return "tool";
      if (frame.includes('"thinking_delta"')) return "thinking";
      return undefined;
    case "chat":
      if (frame.includes('"reasoning_content":"') || frame.includes('"reasoning":"')) return "thinking";
      if (frame.includes('"arguments":"') && !frame.includes('"arguments":""')) return "tool";
      if (frame.includes('"content":"') && !frame.includes('"content":""')) return "text";
      return undefined;
    case "responses":
      if (frame.includes("response.output_text.delta")) return "text";
      if (frame.includes("response.function_call_arguments.delta") || frame.includes("custom_tool_call_input.delta"))
        return "tool";
      if (frame.includes("reasoning_summary_text.delta") || frame.includes("reasoning_text.delta")) return "thinking";
      return undefined;
    case "generate":
      // A generateContent function call comes whole, in one part: a cut "in" it falls after it.
      if (frame.includes('"thought":true')) return "thinking";
      if (frame.includes('"functionCall"')) return "tool";
      if (frame.includes('"text"')) return "text";
      return undefined;
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/**
 * A streamed reply cut after its `after`-th delta of kind `at` (the frames before it relayed
 * whole), ended the way `kind` says. A stream with fewer such deltas is cut after its last one.
 * Used by the `cut_after` fault (faults.ts), which applies to one request and then clears.
 */
export async function cutStream(
  res: Response,
  protocol: Protocol,
  cut: { after: number; at: CutIn; kind: CutKind },
  signal: AbortSignal,
): Promise<Response> {
  if (!(res.headers.get("content-type") ?? "").includes("event-stream") || !res.body) return res;
  const text = await res.text();
  // Frames with their blank line (the generateContent stream frames with CRLF).
  const frames = text.match(/[\s\S]*?(?:\r?\n\r?\n|$)/g)?.filter((f) => f !== "") ?? [];
  let seen = 0;
  let end = 0;
  for (let i = 0; i < frames.length; i++) {
    if (deltaKind(protocol, frames[i]!) === cut.at) {
      seen++;
      end = i + 1;
      if (seen >= cut.after) break;
    }
  }
  const kept = frames.slice(0, end).join("") + (cut.kind === "error" ? ERROR_FRAMES[protocol] : "");
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(encoder.encode(kept));
      if (cut.kind === "truncate" || cut.kind === "error") return c.close();
      // Give the head and the kept frames time to be read before the connection breaks (a reset
      // discards what the peer has not read), or stay silent until the caller gives up.
      if (cut.kind === "reset") {
        await Bun.sleep(25);
        return c.error(new Error("connection reset by the simulator's cut fault"));
      }
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
      c.error(new Error("the caller gave up on a quiet stream"));
    },
  });
  return new Response(body, { status: 200, headers: res.headers });
}
