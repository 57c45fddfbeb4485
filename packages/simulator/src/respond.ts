import type { StreamPlan } from "./stream-plan";

/** Marks every reply, so a gateway test can tell the simulator answered. */
export const SIMULATOR_HEADER = { "x-simulator": "turnpike" } as const;

const STREAM_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" } as const;
const encoder = new TextEncoder();

export function jsonResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "application/json", ...SIMULATOR_HEADER, ...headers },
  });
}

/**
 * A streamed body. With no latency every frame is enqueued at once, synchronously (no timers).
 * Otherwise the frames are pulled one by one, `latencyMs` apart; a client that goes away stops
 * the pulling. `reset` errors the body after the last frame went out, like a dropped connection.
 */
export function streamResponse(
  plan: StreamPlan,
  latencyMs: number,
  contentType: string,
  headers: Record<string, string> = {},
): Response {
  const { frames, reset } = plan;
  let body: ReadableStream<Uint8Array>;
  if (latencyMs <= 0 && !reset) {
    body = new ReadableStream({
      start(controller) {
        controller.enqueue(encoder.encode(frames.join("")));
        controller.close();
      },
    });
  } else {
    let i = 0;
    let cancelled = false;
    body = new ReadableStream({
      async pull(controller) {
        if (i > 0 && latencyMs > 0) await Bun.sleep(latencyMs);
        if (cancelled) return;
        if (i < frames.length) controller.enqueue(encoder.encode(frames[i++]!));
        else if (reset) {
          // Bun pulls a zero-latency body before it flushes the head, and a TCP reset discards
          // whatever the peer has not read yet: give the status and frames time to be read
          // before the connection breaks, so tests see exactly the frames that were sent.
          await Bun.sleep(Math.max(25, latencyMs));
          controller.error(new Error("simulated connection reset"));
        } else controller.close();
      },
      cancel() {
        cancelled = true;
      },
    });
  }
  return new Response(body, {
    status: 200,
    headers: { "content-type": contentType, ...STREAM_HEADERS, ...SIMULATOR_HEADER, ...headers },
  });
}
