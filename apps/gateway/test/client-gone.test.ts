/**
 * Cancel what nobody reads (issue 43, point 4): a client that goes away — an HTTP client that
 * aborts, a Responses WebSocket that closes — makes the gateway close its upstream connection,
 * whether it left while the upstream was still thinking (no head yet), after the head but before
 * the first byte, or mid-stream; for each client format over its passthrough upstream and a
 * translated one, and for JSON replies whose body is late. The upstream is a real socket that
 * records when it closed; the delay is logged here and measured by the bench
 * (bench/src/cancel-delay.ts), not asserted. The request is recorded once, flagged aborted, with
 * the output it relayed; and nothing new starts for a client that is gone (a retry, a queued turn).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { startHarness, type Harness } from "./harness";
import { startClosingUpstream, closingUpstreamEnv, type ClosingUpstream } from "./support/closing-upstream";
import {
  lastWord,
  leaveAndTime,
  type LeavingFormat,
  MODEL_OF,
  PHASES,
  promptFor,
  startLeaving,
  type UpstreamProtocol,
  WORDS,
  words,
} from "./support/leaving-client";

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

/** Each client format over its own protocol (passthrough) and another (translated). */
const CELLS: [LeavingFormat, UpstreamProtocol][] = [
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
const gw = () => ({ url: h.url, key: h.key });

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
        const { call, seen, delayMs } = await leaveAndTime(gw(), up, client, upstream, phase);
        delays.push(`${client} ← ${upstream} (${kind}), ${phase}: ${delayMs.toFixed(1)}`);
        // Closed before its end: the reply was not run out for nobody.
        expect(call.closedAt).toBeGreaterThan(call.arrivedAt);
        expect(call.finished).toBe(false);

        const row = await waitFor("the request's record", async () =>
          (await rows()).find((r) => !before.has(r.request_id)),
        );
        // One record however many ways the request ended (client gone, upstream cut, stream cancelled).
        await Bun.sleep(50);
        expect((await rows()).filter((r) => !before.has(r.request_id)).map((r) => r.request_id)).toEqual([
          row.request_id,
        ]);
        expect(row.aborted).toBe(true);
        expect(row.model).toBe(MODEL_OF[upstream]);
        if (phase === "mid-stream") {
          // Billed for what was relayed: at least what the client read, at most what the upstream
          // wrote (a generateContent upstream's running count included), far short of the whole reply.
          const count = h.gw.deps.countText;
          const wrote = lastWord(call.written);
          expect(row.output_tokens).toBeGreaterThanOrEqual(count(words(lastWord(seen))));
          expect(row.output_tokens).toBeLessThanOrEqual(Math.max(count(words(wrote)), 2 * wrote));
          expect(row.output_tokens).toBeLessThan(count(words(WORDS)) / 2);
          // The client had its 200 and part of the stream.
          expect(row.status).toBe(200);
        } else {
          expect(row.output_tokens).toBe(0);
        }
      }, 20_000);
    }
  });
}

describe("JSON replies", () => {
  // The head at once, the body late: the gateway listens to its client only once a body is late.
  for (const [client, upstream] of [
    ["chat", "chat"],
    ["messages", "generate"],
  ] as const)
    for (const phase of ["before the head", "before the first byte"] as const)
      test(`${client} client, ${upstream} upstream, leaving ${phase}: the upstream connection closes, recorded as gone`, async () => {
        const before = new Set((await rows()).map((r) => r.request_id));
        const { call, delayMs } = await leaveAndTime(gw(), up, client, upstream, phase, false);
        delays.push(`${client} ← ${upstream} JSON, ${phase}: ${delayMs.toFixed(1)}`);
        expect(call.closedAt).toBeGreaterThan(call.arrivedAt);
        const row = await waitFor("the request's record", async () =>
          (await rows()).find((r) => !before.has(r.request_id)),
        );
        expect(row).toMatchObject({ stream: false, status: 499, aborted: true, output_tokens: 0 });
      });
});

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
    const model = MODEL_OF.responses;
    ws.send(JSON.stringify({ type: "response.create", model, store: false, input: promptFor("mid-stream") }));
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
    const c = await startLeaving(gw(), "chat", MODEL_OF.chat, "go [sim error=503 retry_after=1]");
    await up.when((cs) => cs.find((x) => x.arrivedAt >= since && x.headAt !== undefined));
    c.leave();
    const row = await waitFor("the request's record", async () =>
      (await rows()).find((r) => !before.has(r.request_id)),
    );
    expect(up.calls.filter((x) => x.arrivedAt >= since).length).toBe(1);
    expect(row).toMatchObject({ status: 499, aborted: true, attempts: 1, output_tokens: 0 });
  });
});
