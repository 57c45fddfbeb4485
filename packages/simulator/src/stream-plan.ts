import type { MidstreamMode } from "./parse-directives";

/** The frames of one streamed reply, ready to write; `reset` errors the body after the last frame. */
export interface StreamPlan {
  frames: string[];
  reset: boolean;
}

/** Per-request values a renderer stamps on the reply (strings are template slots, see reply-template.ts). */
export interface RenderContext {
  /** Sequence number of the request in this simulator, used in ids. */
  seq: number | string;
  /** Unix seconds; always written through JSON.stringify. */
  created: number | string;
}

/**
 * Applies a `midstream_error` directive: keeps the frames up to and including the middle content
 * delta (`deltaAt` lists their indexes), then the protocol's in-band error frames (mode `error`),
 * nothing (`close`), or nothing and a broken body (`reset`).
 */
export function withMidstream(
  frames: string[],
  deltaAt: number[],
  mode: MidstreamMode | undefined,
  errorFrames: string[],
): StreamPlan {
  if (!mode) return { frames, reset: false };
  const cut = deltaAt.length > 0 ? deltaAt[Math.ceil(deltaAt.length / 2) - 1]! + 1 : Math.min(1, frames.length);
  const kept = frames.slice(0, cut);
  if (mode === "error") kept.push(...errorFrames);
  return { frames: kept, reset: mode === "reset" };
}
