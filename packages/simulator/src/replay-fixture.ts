import { formatSSE } from "@turnpike/schema/sse";
import type { Protocol } from "./simulator-options";
import type { StreamPlan } from "./stream-plan";

/**
 * Recorded vendor payloads (src/__fixtures__; docs/recorded-fixtures.md lists where each was
 * recorded). `<name>.json` is a reply body, `<name>.chunks.txt` one SSE payload per
 * line, `<name>.error.json` an error body whose status is the number in the name.
 */
export const REPLAYS = {
  "anthropic-text": "messages",
  "anthropic-tool": "messages",
  "openai-text": "chat",
  "openai-tool": "chat",
  "google-text": "generate",
  "google-tool": "generate",
  "anthropic-400": "messages",
  "openai-400": "chat",
  "google-429": "generate",
} as const satisfies Record<string, Protocol>;

export type ReplayName = keyof typeof REPLAYS;

export function isReplayName(name: string): name is ReplayName {
  return Object.hasOwn(REPLAYS, name);
}

const files = new Map<string, Promise<string>>();

/** A fixture's text, read once. */
function fixture(file: string): Promise<string> {
  let text = files.get(file);
  if (!text) {
    text = Bun.file(new URL(`./__fixtures__/${file}`, import.meta.url)).text();
    files.set(file, text);
  }
  return text;
}

/** The HTTP status of an error fixture, or undefined for a reply fixture. */
export function replayErrorStatus(name: ReplayName): number | undefined {
  const m = /-(\d{3})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The recorded body of a JSON reply or error fixture, byte for byte. */
export function replayBody(name: ReplayName): Promise<string> {
  return fixture(replayErrorStatus(name) === undefined ? `${name}.json` : `${name}.error.json`);
}

/**
 * A recorded stream, framed as its protocol frames it: messages `event: <type>` + `data:`; chat
 * `data:` then `data: [DONE]`; generateContent `data:` with CRLF (or the JSON-array form when
 * `sse` is false).
 */
export async function replayStream(name: ReplayName, sse = true): Promise<StreamPlan> {
  const lines = (await fixture(`${name}.chunks.txt`)).split("\n").filter((l) => l.trim() !== "");
  const protocol: Protocol = REPLAYS[name];
  let frames: string[];
  switch (protocol) {
    case "messages":
      // Every recorded messages payload carries its `type`, which is the event name (fixtures README).
      frames = lines.map((data) => formatSSE({ event: (JSON.parse(data) as { type: string }).type, data }));
      break;
    case "chat":
      frames = [...lines.map((data) => formatSSE({ data })), formatSSE({ data: "[DONE]" })];
      break;
    case "generate":
      frames = sse
        ? lines.map((data) => formatSSE({ data }).replaceAll("\n", "\r\n"))
        : [...lines.map((l, i) => (i === 0 ? `[${l}` : `,\r\n${l}`)), "]"];
      break;
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
  return { frames, reset: false };
}
