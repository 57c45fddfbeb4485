/**
 * A client that drops a stream is billed for what was generated so far, on every client format ×
 * upstream protocol: the record exists, is flagged aborted and estimated, and counts the prompt
 * and the text that reached the client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitFor } from "./scaleout/cluster";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const UPSTREAMS = { messages: "alpha-haiku-4-5", chat: "beta-5", generate: "gamma-3-flash" } as const;

/** The request's record, once it has landed (within a group commit or two; the bound is for a loaded machine). */
async function recordOf(rid: string): Promise<any> {
  return waitFor(`the record of ${rid}`, async () => {
    const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    return ((await res.json()) as any).data.find((r: any) => r.request_id === rid);
  }).catch(() => undefined);
}

for (const dialect of ["messages", "chat"] as const) {
  describe(`${dialect} client drops the stream`, () => {
    for (const [protocol, model] of Object.entries(UPSTREAMS)) {
      test(`from a ${protocol} upstream (${model})`, async () => {
        const ac = new AbortController();
        const content = "tell me everything [sim chunks=60 latency=40]";
        const body =
          dialect === "messages"
            ? { model, max_tokens: 2000, stream: true, messages: [{ role: "user", content }] }
            : { model, stream: true, messages: [{ role: "user", content }] };
        const res = await h.call(dialect === "messages" ? "/v1/messages" : "/v1/chat/completions", {
          method: "POST",
          dialect,
          signal: ac.signal,
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        const rid = res.headers.get("x-request-id")!;
        const reader = res.body!.getReader();
        let text = "";
        const decoder = new TextDecoder();
        // Take a few text pieces, then leave.
        while ((text.match(dialect === "messages" ? /text_delta/g : /"content":"[^"]/g) ?? []).length < 4) {
          text += decoder.decode((await reader.read()).value, { stream: true });
        }
        ac.abort();
        await reader.cancel().catch(() => {});
        const row = await recordOf(rid);
        expect(row).toBeDefined();
        expect(row.aborted).toBe(true);
        expect(row.estimated).toBe(true);
        expect(row.stream).toBe(true);
        expect(row.status).toBe(200);
        expect(row.input_tokens).toBeGreaterThan(5);
        // At least the four pieces seen, at most far fewer than the 60 the upstream would have sent.
        expect(row.output_tokens).toBeGreaterThanOrEqual(4);
        expect(row.output_tokens).toBeLessThan(60);
        expect(row.cost_usd).toBeGreaterThan(0);
      }, 15_000);
    }
  });
}

describe("the upstream is told at once", () => {
  test("an aborted client cancels the upstream body and its request", async () => {
    // Watch the upstream side through an injected fetch: when was its request aborted (or its
    // body cancelled)?
    let upstreamCancelledAt = 0;
    let upstreamEnded = false;
    let upstreamSignal: AbortSignal | undefined;
    const watching = (async (input: RequestInfo | URL, init?: RequestInit) => {
      upstreamSignal = init?.signal ?? undefined;
      upstreamSignal?.addEventListener("abort", () => (upstreamCancelledAt ||= performance.now()));
      const res = await fetch(input, init);
      const reader = res.body!.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          const { done, value } = await reader.read();
          if (done) c.close();
          else {
            // The upstream's own last event: it ran to its end.
            if (new TextDecoder().decode(value).includes("[DONE]")) upstreamEnded = true;
            c.enqueue(value);
          }
        },
        cancel(reason) {
          upstreamCancelledAt ||= performance.now();
          return reader.cancel(reason);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    }) as typeof fetch;
    const hh = await startHarness({}, { fetch: watching });
    try {
      const ac = new AbortController();
      const res = await hh.call("/v1/chat/completions", {
        method: "POST",
        signal: ac.signal,
        body: JSON.stringify({
          model: "delta-m3",
          stream: true,
          messages: [{ role: "user", content: "go [sim chunks=200 latency=30]" }],
        }),
      });
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      await reader.cancel().catch(() => {});
      await waitFor("the upstream to be let go", async () => upstreamCancelledAt > 0 || upstreamEnded || undefined);
      // 200 pieces at 30 ms take 6 s: the upstream is let go before its end, not left to run.
      expect(upstreamEnded).toBe(false);
      expect(upstreamCancelledAt).toBeGreaterThan(0);
      expect(upstreamSignal?.aborted).toBe(true);
    } finally {
      await hh.close();
    }
  });
});
