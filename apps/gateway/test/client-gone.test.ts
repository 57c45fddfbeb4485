/**
 * Cancel what nobody reads (issue 43, point 4): a client that goes away — an HTTP client that
 * aborts, a Responses WebSocket that closes — makes the gateway close its upstream connection,
 * whether it left while the upstream was still thinking (no head yet), after the head but before
 * the first byte, or mid-stream; for each client format over its passthrough upstream and a
 * translated one. The upstream is a real socket that records when it closed; the delay is logged
 * here and measured by the bench (bench/src/cancel-delay.ts), not asserted. The request is
 * recorded once, flagged aborted, with the output it relayed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { startHarness, type Harness } from "./harness";
import { startClosingUpstream, closingUpstreamEnv, type ClosingUpstream } from "./support/closing-upstream";

let up: ClosingUpstream;
let h: Harness;
beforeAll(async () => {
  up = await startClosingUpstream();
  // The Responses vendor of the conformance table, and one retry of a failed attempt.
  const config = `${tmpdir()}/turnpike-client-gone-${process.pid}.json`;
  const vendor = await Bun.file(`${import.meta.dir}/conformance/responses-vendor.json`).json();
  await Bun.write(config, JSON.stringify({ ...vendor, routing: { retries: 1 } }));
  h = await startHarness(closingUpstreamEnv(up.url, config));
});
afterAll(async () => {
  await h.close();
  await up.stop();
});

type Client = "messages" | "chat" | "responses" | "responses-ws" | "generate";
type Upstream = "messages" | "chat" | "generate" | "responses";
type Phase = "before the head" | "before the first byte" | "mid-stream";

const MODEL: Record<Upstream, string> = {
  messages: "alpha-haiku-4-5",
  chat: "beta-5",
  generate: "gamma-3-flash",
  responses: "epsilon-5",
};

/** Each client format over its own protocol (passthrough) and another (translated). */
const CELLS: [Client, Upstream][] = [
  ["messages", "messages"],
  ["messages", "chat"],
  ["chat", "chat"],
  ["chat", "messages"],
  ["responses", "responses"],
  ["responses", "chat"],
  ["responses-ws", "responses"],
  ["responses-ws", "messages"],
  ["generate", "generate"],
  ["generate", "chat"],
];
const PHASES: Phase[] = ["before the head", "before the first byte", "mid-stream"];

const WORDS = 200;
/** `w1 w2 … wN`: one word per chunk, so the words a side saw say how far the stream got. */
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(" ");
const prompt = (phase: Phase) =>
  phase === "before the head"
    ? "go [hold]"
    : phase === "before the first byte"
      ? "go [silent]"
      : `go [sim chunks=${WORDS} latency=20 text="${words(WORDS)}"]`;
/** The highest `wN` in a text: how many words of the reply it holds. */
const lastWord = (text: string) => Math.max(0, ...[...text.matchAll(/\bw(\d+)\b/g)].map((m) => Number(m[1])));

function httpCall(client: Exclude<Client, "responses-ws">, model: string, content: string, signal: AbortSignal) {
  switch (client) {
    case "messages":
      return h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        signal,
        body: JSON.stringify({ model, max_tokens: 4000, stream: true, messages: [{ role: "user", content }] }),
      });
    case "chat":
      return h.call("/v1/chat/completions", {
        method: "POST",
        signal,
        body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content }] }),
      });
    case "responses":
      return h.call("/v1/responses", {
        method: "POST",
        signal,
        body: JSON.stringify({ model, stream: true, store: false, input: content }),
      });
    case "generate":
      return h.call(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
        method: "POST",
        signal,
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: content }] }] }),
      });
    default: {
      const never: never = client;
      throw new Error(`unknown client ${String(never)}`);
    }
  }
}

/** A client that can be made to leave, and what it received before it did. */
interface Leaving {
  received(): string;
  leave(): void;
}

/** Starts the call; resolves once it is under way (the socket open and the frame sent, or the fetch made). */
async function start(client: Client, model: string, content: string): Promise<Leaving> {
  let text = "";
  if (client === "responses-ws") {
    const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: `Bearer ${h.key}` },
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
  void httpCall(client, model, content, ac.signal)
    .then(async (res) => {
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    })
    .catch(() => {}); // the abort rejects the fetch or its body's read
  return { received: () => text, leave: () => ac.abort() };
}

/** The ledger's rows for this test's key, newest last. */
async function rows() {
  await h.gw.deps.ledger.flush();
  return h.gw.deps.store.queryUsage({ key_id: h.keyId, limit: 100_000 });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

const delays: string[] = [];
afterAll(() => {
  console.log(`upstream closed after the client left (ms):\n${delays.join("\n")}`);
});

for (const [client, upstream] of CELLS) {
  const kind = client.replace("-ws", "") === upstream ? "passthrough" : "translated";
  describe(`${client} client, ${upstream} upstream (${kind})`, () => {
    for (const phase of PHASES) {
      test(`leaving ${phase} closes the upstream connection; one record, aborted`, async () => {
        const before = new Set((await rows()).map((r) => r.request_id));
        const since = performance.now();
        const c = await start(client, MODEL[upstream], prompt(phase));
        const isCall = (x: { arrivedAt: number; path: string }) =>
          x.arrivedAt >= since && !/count_tokens|countTokens|input_tokens/.test(x.path);
        const call =
          phase === "before the head"
            ? await up.when((cs) => cs.find(isCall))
            : phase === "before the first byte"
              ? await up.when((cs) => cs.find((x) => isCall(x) && x.headAt !== undefined))
              : await up.when((cs) => (lastWord(c.received()) >= 5 ? cs.find(isCall) : undefined));
        const seen = c.received();
        const leftAt = performance.now();
        c.leave();
        await up.when(() => (call.closedAt !== undefined ? call : undefined));
        const delay = call.closedAt! - leftAt;
        delays.push(`${client} ← ${upstream} (${kind}), ${phase}: ${delay.toFixed(1)}`);
        expect(call.finished).toBe(false);
        expect(call.closedAt).toBeGreaterThan(call.arrivedAt);

        const news = await waitFor("the request's record", async () => {
          const n = (await rows()).filter((r) => !before.has(r.request_id));
          return n.length ? n : undefined;
        });
        await Bun.sleep(50);
        const after = (await rows()).filter((r) => !before.has(r.request_id));
        expect(after.length).toBe(1);
        const row = after[0]!;
        expect(news[0]!.request_id).toBe(row.request_id);
        expect(row.aborted).toBe(true);
        expect(row.model).toBe(MODEL[upstream]);
        if (phase === "mid-stream") {
          // At least what the client read, at most what the upstream wrote (the reply was cut early).
          const count = h.gw.deps.countText;
          expect(row.output_tokens).toBeGreaterThanOrEqual(count(words(lastWord(seen))));
          expect(row.output_tokens).toBeLessThanOrEqual(
            Math.max(count(words(lastWord(call.written))), lastWord(call.written) * 2),
          );
          expect(row.status).toBe(200);
        } else {
          expect(row.output_tokens).toBe(0);
        }
      }, 20_000);
    }
  });
}

describe("no new work for a client that is gone", () => {
  test("a Responses WebSocket closed mid-stream: the turn queued behind it never reaches an upstream", async () => {
    const since = performance.now();
    const before = new Set((await rows()).map((r) => r.request_id));
    const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/responses`, {
      headers: { authorization: `Bearer ${h.key}` },
    } as unknown as string[]); // Bun's WebSocket takes headers in its options object
    await new Promise<void>((ok) => ws.addEventListener("open", () => ok(), { once: true }));
    let text = "";
    ws.addEventListener("message", (e) => {
      text += String(e.data);
    });
    const model = MODEL.responses;
    ws.send(JSON.stringify({ type: "response.create", model, store: false, input: prompt("mid-stream") }));
    ws.send(JSON.stringify({ type: "response.create", model, store: false, input: "the next turn" }));
    const call = await up.when((cs) => (lastWord(text) >= 3 ? cs.find((x) => x.arrivedAt >= since) : undefined));
    ws.close();
    await up.when(() => (call.closedAt !== undefined ? call : undefined));
    await waitFor("the first turn's record", async () =>
      (await rows()).some((r) => !before.has(r.request_id)) ? true : undefined,
    );
    // The queue moves on once the first turn has ended; the second finds its socket closed.
    await Bun.sleep(200);
    expect(up.calls.filter((x) => x.arrivedAt >= since).map((x) => x.body.includes("the next turn"))).toEqual([false]);
    expect((await rows()).filter((r) => !before.has(r.request_id)).length).toBe(1);
  });

  test("a client gone while its failed attempt waits to be retried: no second attempt, recorded as gone", async () => {
    const since = performance.now();
    const before = new Set((await rows()).map((r) => r.request_id));
    // The upstream's 503 asks for a one-second wait, within routing.retry_after_max_s: the retry waits it out.
    const c = await start("chat", MODEL.chat, "go [sim error=503 retry_after=1]");
    await up.when((cs) => cs.find((x) => x.arrivedAt >= since && x.headAt !== undefined));
    c.leave();
    const row = await waitFor("the request's record", async () =>
      (await rows()).find((r) => !before.has(r.request_id)),
    );
    expect(up.calls.filter((x) => x.arrivedAt >= since).length).toBe(1);
    expect(row).toMatchObject({ status: 499, aborted: true, attempts: 1, output_tokens: 0 });
  });
});
