import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config/config";
import { readSSE, startHarness, type Harness } from "./harness";
import { waitFor } from "./scaleout/cluster";

let h: Harness;
beforeAll(async () => {
  // Keep-alives every second, so a quiet upstream shows them quickly.
  h = await startHarness({ TURNPIKE_KEEPALIVE_SECONDS: "1" });
});
afterAll(async () => {
  await h.close();
});

describe("a quiet stream", () => {
  test("gets keep-alives in each format while the upstream says nothing", async () => {
    const m = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      // chat upstream, one text piece: 4 frames, 1.6 s apart.
      body: JSON.stringify({
        model: "beta-5",
        max_tokens: 50,
        stream: true,
        messages: [{ role: "user", content: "slow [sim chunks=1 latency=1600]" }],
      }),
    });
    const frames = await readSSE(m);
    const pings = frames.filter((f) => f.event === "ping");
    expect(pings.length).toBeGreaterThanOrEqual(2);
    // Nothing follows message_stop, not even a keep-alive.
    expect(frames.at(-1)!.event).toBe("message_stop");

    const c = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({
        model: "delta-m3",
        stream: true,
        messages: [{ role: "user", content: "slow [sim chunks=1 latency=1600]" }],
      }),
    });
    const raw = await c.text();
    expect(raw).toContain(": keep-alive\n\n");
    expect(raw.trimEnd().endsWith("data: [DONE]")).toBe(true);
  }, 20_000);
});

describe("the server's idle timeout", () => {
  test("does not cut a stream that stays quiet longer than it, even with no keep-alives", async () => {
    // Bun counts only reads as activity, so writes (keep-alives) alone do not save a quiet
    // stream: the gateway lifts the idle timeout per streaming request. Here the server closes
    // connections idle for 2 s; the upstream pauses 3 s between frames. (Without the per-request
    // lift this stream is cut after ~4 s: Bun checks idleness on a ~4 s tick.)
    const hh = await startHarness({ TURNPIKE_IDLE_TIMEOUT_SECONDS: "2", TURNPIKE_KEEPALIVE_SECONDS: "0" });
    try {
      const res = await hh.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({
          model: "beta-5",
          stream: true,
          messages: [{ role: "user", content: 'quiet [sim chunks=1 latency=3000 text="held open"]' }],
        }),
      });
      const raw = await res.text();
      expect(raw).not.toContain("keep-alive");
      expect(raw).toContain("held open");
      expect(raw.trimEnd().endsWith("data: [DONE]")).toBe(true);
    } finally {
      await hh.close();
    }
  }, 30_000);

  test("defaults to Bun's maximum, 255 s, with keep-alives every 15 s", () => {
    const c = loadConfig({});
    expect(c.idleTimeoutSeconds).toBe(255);
    expect(c.keepAliveSeconds).toBe(15);
  });
});

describe("client disconnect", () => {
  test("aborts the upstream and still writes a usage record flagged aborted", async () => {
    const ac = new AbortController();
    const res = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      signal: ac.signal,
      body: JSON.stringify({
        model: "alpha-opus-4-8",
        max_tokens: 500,
        stream: true,
        messages: [{ role: "user", content: "long [sim chunks=40 latency=50]" }],
      }),
    });
    const rid = res.headers.get("x-request-id")!;
    const reader = res.body!.getReader();
    // Read until some text has arrived, then walk away.
    let seen = "";
    while ((seen.match(/text_delta/g) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    await reader.cancel().catch(() => {});
    // The record lands within a group commit or two (the bound is for a loaded machine).
    const row: any = await waitFor("the aborted stream's record", async () => {
      const usage = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}`, {
        headers: { authorization: "Bearer sk-admin-test-0123456789abcdefghijklmnop" },
      });
      return ((await usage.json()) as any).data.find((r: any) => r.request_id === rid);
    });
    expect(row).toBeDefined();
    expect(row.aborted).toBe(true);
    expect(row.stream).toBe(true);
    expect(row.input_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.estimated).toBe(true);
  }, 15_000);
});
