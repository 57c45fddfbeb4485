/**
 * An inbound `x-request-id`: kept when well-formed (1 to 128 of A–Z a–z 0–9 - _ . :), the reply's
 * id headers then saying the caller's id and `x-turnpike-request-id` Turnpike's own; replaced
 * otherwise. Turnpike's id stays the ledger's key, so a caller reusing an id is metered each time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pinoLogger } from "../../src/log/logger";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";

let h: Harness;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const logger = pinoLogger({
    level: "info",
    format: "json",
    secrets: [],
    destination: { write: (s: string) => void lines.push(JSON.parse(s)) },
  });
  h = await startHarness({}, { logger });
});
afterAll(() => h.close());

const chat = (id: string | undefined, body: Record<string, unknown> = {}) =>
  h.call("/v1/chat/completions", {
    method: "POST",
    headers: id === undefined ? {} : { "x-request-id": id },
    body: JSON.stringify({ model: "beta-5.5", messages: [{ role: "user", content: "hi" }], ...body }),
  });

const OWN = /^req_[0-9a-f]{32}$/;

describe("x-request-id", () => {
  test("a well-formed id is kept on JSON, streamed and error replies; Turnpike's own is beside it", async () => {
    const id = "3f2a8c1e-6b7d-4e59-9a0b-1c2d3e4f5a6b";
    const replies = [
      await chat(id),
      await chat(id, { stream: true }),
      await chat(id, { model: "no-such-model" }),
      await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        headers: { "x-request-id": id },
        body: JSON.stringify({ model: "alpha-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
      }),
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 200, 404, 200]);
    for (const r of replies) {
      await r.text();
      expect(r.headers.get("x-request-id")).toBe(id);
      expect(r.headers.get("x-turnpike-request-id")).toMatch(OWN);
    }
    // The messages format's own header says the same.
    expect(replies[3]!.headers.get("request-id")).toBe(id);
    // The log lines carry both.
    const own = replies[0]!.headers.get("x-turnpike-request-id");
    const line = lines.find((l) => l.request_id === own);
    expect(line?.client_request_id).toBe(id);
    const refused = lines.find(
      (l) => l.msg === "refused" && l.request_id === replies[2]!.headers.get("x-turnpike-request-id"),
    );
    expect(refused).toMatchObject({ msg: "refused", client_request_id: id, status: 404 });
  });

  test("ids at the edges of the accepted alphabet and length are kept", async () => {
    for (const id of ["a", "x".repeat(128), "01J9Z3_trace.span:1-A"]) {
      const r = await chat(id);
      await r.text();
      expect(r.headers.get("x-request-id")).toBe(id);
    }
  });

  test("a malformed id is replaced by Turnpike's own, and nothing else is sent", async () => {
    for (const id of ["x".repeat(129), "has space", "semi;colon", "slash/ed", "naïve", ""]) {
      const r = await chat(id);
      await r.text();
      expect(r.status).toBe(200);
      expect(r.headers.get("x-request-id")).toMatch(OWN);
      expect(r.headers.get("x-turnpike-request-id")).toBeNull();
    }
    const none = await chat(undefined);
    await none.text();
    expect(none.headers.get("x-request-id")).toMatch(OWN);
  });

  test("a reused id is metered every time: the ledger is keyed by Turnpike's own ids", async () => {
    const reused = "the-same-id-every-time";
    const owns: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await chat(reused, { messages: [{ role: "user", content: `turn ${i}` }] });
      await r.text();
      owns.push(r.headers.get("x-turnpike-request-id") ?? "");
    }
    expect(new Set(owns).size).toBe(3);
    const { data } = (await (
      await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=1000`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as { data: { request_id: string }[] };
    for (const own of owns) expect(data.map((d) => d.request_id)).toContain(own);
  });
});
