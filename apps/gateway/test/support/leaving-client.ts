/**
 * A streaming client of each format that can be made to leave at any moment: an HTTP client
 * aborts its fetch (its connection closes), a Responses WebSocket client closes its socket. Used
 * with the closing upstream (closing-upstream.ts) by the client-gone test and by the bench's
 * `cancel-delay.ts`, which measure how soon the gateway lets its upstream go.
 */
import type { ClosingUpstream, UpstreamCall } from "./closing-upstream";

/** The client formats, the Responses one over both of its transports. */
export type LeavingFormat = "messages" | "chat" | "responses" | "responses-ws" | "generate";
export const LEAVING_FORMATS: readonly LeavingFormat[] = ["messages", "chat", "responses", "responses-ws", "generate"];

/** An upstream protocol, and the catalog model the closing upstream serves it for. */
export type UpstreamProtocol = "messages" | "chat" | "generate" | "responses";
export const MODEL_OF: Record<UpstreamProtocol, string> = {
  messages: "alpha-haiku-4-5",
  chat: "beta-5",
  generate: "gamma-3-flash",
  responses: "epsilon-5",
};

/** The moment a client leaves: before the upstream's head, after it but before the first byte, or mid-stream. */
export type Phase = "before the head" | "before the first byte" | "mid-stream";
export const PHASES: readonly Phase[] = ["before the head", "before the first byte", "mid-stream"];

/** Words in a mid-stream reply: `w1 w2 … wN`, one per chunk, so the words a side saw say how far it got. */
export const WORDS = 200;
export const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(" ");
/** The highest `wN` in a text: how many words of the reply it holds. */
export const lastWord = (text: string) => Math.max(0, ...[...text.matchAll(/\bw(\d+)\b/g)].map((m) => Number(m[1])));

/** The prompt that makes the closing upstream hold its head, hold its body, or stream word by word. */
export function promptFor(phase: Phase): string {
  switch (phase) {
    case "before the head":
      return "go [hold]";
    case "before the first byte":
      return "go [silent]";
    case "mid-stream":
      return `go [sim chunks=${WORDS} latency=10 text="${words(WORDS)}"]`;
    default: {
      const never: never = phase;
      throw new Error(`unknown phase ${String(never)}`);
    }
  }
}

/** A client under way, and what it received before it left. */
export interface Leaving {
  received(): string;
  leave(): void;
}

/** The gateway's address and a key for it. */
export interface GatewayAt {
  url: string;
  key: string;
}

function httpCall(
  gw: GatewayAt,
  format: Exclude<LeavingFormat, "responses-ws">,
  model: string,
  content: string,
  stream: boolean,
) {
  const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${gw.key}` };
  switch (format) {
    case "messages":
      return {
        path: "/v1/messages",
        headers: { "content-type": "application/json", "x-api-key": gw.key, "alpha-version": "2023-06-01" },
        body: { model, max_tokens: 4000, stream, messages: [{ role: "user", content }] },
      };
    case "chat":
      return {
        path: "/v1/chat/completions",
        headers,
        body: { model, stream, messages: [{ role: "user", content }] },
      };
    case "responses":
      return { path: "/v1/responses", headers, body: { model, stream, store: false, input: content } };
    case "generate":
      return {
        path: `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        headers,
        body: { contents: [{ role: "user", parts: [{ text: content }] }] },
      };
    default: {
      const never: never = format;
      throw new Error(`unknown client format ${String(never)}`);
    }
  }
}

/**
 * Starts a stream (`stream: false`: a JSON reply, HTTP only); resolves once it is under way (the
 * socket open and its frame sent, or the fetch made).
 */
export async function startLeaving(
  gw: GatewayAt,
  format: LeavingFormat,
  model: string,
  content: string,
  stream = true,
): Promise<Leaving> {
  let text = "";
  if (format === "responses-ws") {
    const ws = new WebSocket(`${gw.url.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: `Bearer ${gw.key}` },
    } as unknown as string[]); // Bun's WebSocket takes headers in its options object
    await new Promise<void>((ok, fail) => {
      ws.addEventListener("open", () => ok(), { once: true });
      ws.addEventListener("error", () => fail(new Error("the socket did not open")), { once: true });
    });
    ws.addEventListener("message", (e) => {
      text += String(e.data);
    });
    ws.send(JSON.stringify({ type: "response.create", model, store: false, input: content }));
    return { received: () => text, leave: () => ws.close() };
  }
  const ac = new AbortController();
  const decoder = new TextDecoder();
  const call = httpCall(gw, format, model, content, stream);
  void fetch(gw.url + call.path, {
    method: "POST",
    headers: call.headers,
    body: JSON.stringify(call.body),
    signal: ac.signal,
  })
    .then(async (res) => {
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    })
    .catch(() => {}); // leaving rejects the fetch or its body's read
  return { received: () => text, leave: () => ac.abort() };
}

/** One client that left: the upstream call it made, what it had received, and how long the upstream's connection outlived it. */
export interface Left {
  call: UpstreamCall;
  seen: string;
  /** From the client's leaving to the upstream connection's close, in ms. */
  delayMs: number;
}

/** Count calls are answered at once; the inference call is the one watched. */
const isInference = (c: UpstreamCall, since: number) =>
  c.arrivedAt >= since && !/count_tokens|countTokens|input_tokens/.test(c.path);

/**
 * Starts a stream of `format` on `upstream`'s model, leaves it at `phase` (once the upstream has
 * the call; once it has sent its head; once five words reached the client), and waits for the
 * upstream to see its connection close.
 */
export async function leaveAndTime(
  gw: GatewayAt,
  up: ClosingUpstream,
  format: LeavingFormat,
  upstream: UpstreamProtocol,
  phase: Phase,
  stream = true,
): Promise<Left> {
  const since = performance.now();
  const c = await startLeaving(gw, format, MODEL_OF[upstream], promptFor(phase), stream);
  const call = await up.when((cs) => {
    if (phase === "mid-stream" && lastWord(c.received()) < 5) return undefined;
    return cs.find((x) => isInference(x, since) && (phase !== "before the first byte" || x.headAt !== undefined));
  });
  const seen = c.received();
  const leftAt = performance.now();
  c.leave();
  await up.when(() => (call.closedAt !== undefined ? call : undefined));
  return { call, seen, delayMs: call.closedAt! - leftAt };
}
