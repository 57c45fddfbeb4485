import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Harness } from "../harness";
import {
  type BadUpstream,
  type Scripted,
  clientCall,
  errorMessageOf,
  recordsOf,
  startBadUpstream,
  startBadUpstreamGateway,
} from "./bad-upstream";
import { chatStream, messagesStream } from "./replies";

// Issue 11, items 3 and 6: a vendor that answers 200 with something that is not a reply. Every
// client format, passthrough and translated, JSON and stream: the client gets a 502 (or, once a
// stream has started, only the in-band error) naming the vendor, never the vendor's garbage, and
// the ledger has exactly one record of it, billed nothing.

let bad: BadUpstream;
let h: Harness;
/** The same upstreams with continuation on (the default): a broken stream is continued instead. */
let going: Harness;
const dir = mkdtempSync(join(tmpdir(), "turnpike-broken-"));
beforeAll(async () => {
  bad = startBadUpstream();
  // These tests pin how a stream that is not continued ends (docs: site/guide/routing.md, "Continuation").
  const off = join(dir, "no-continuation.yaml");
  writeFileSync(off, "routing:\n  continuation: false\n");
  h = await startBadUpstreamGateway(bad, { TURNPIKE_CONFIG: off });
  going = await startBadUpstreamGateway(bad);
});
afterAll(async () => {
  await h.close();
  await going.close();
  bad.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Marks the vendor's bytes: none of it may reach the client. */
const MARK = "ZZGARBAGE";

const JSON_SHAPES: Record<string, Scripted> = {
  "truncated JSON": {
    type: "application/json",
    body: `{"id":"msg_${MARK}","type":"message","content":[{"type":"text","text":"Hel`,
  },
  "an HTML page": { type: "text/html", body: `<html><body><h1>502 Bad Gateway ${MARK}</h1></body></html>` },
  "an empty body": { type: "application/json", body: "" },
  "plain garbage": { type: "text/plain", body: `${MARK} lorem ipsum` },
  "JSON that is not an object": { type: "application/json", body: `["${MARK}"]` },
};

const STREAM_SHAPES: Record<string, Scripted> = {
  "garbage SSE": { type: "text/event-stream", body: [`${MARK} lorem ipsum\n\n`, "not an event either\n\n"] },
  "truncated SSE": { type: "text/event-stream", body: [`data: {"type":"${MARK}","choices":[{"delta":{"content":"Hel`] },
  "an empty stream": { type: "text/event-stream", body: [] },
  "HTML in an event stream": { type: "text/event-stream", body: [`<!doctype html><html><body>${MARK}</body></html>`] },
};

/** Client format, model: passthrough (same protocol) and translated pairs, each vendor protocol once. */
const ROUTES = [
  ["messages", "alpha-haiku-4-5", "passthrough"],
  ["chat", "beta-5", "passthrough"],
  ["messages", "beta-5", "translated"],
  ["chat", "alpha-haiku-4-5", "translated"],
  ["messages", "gamma-3-flash", "translated"],
  ["chat", "gamma-3-flash", "translated"],
  ["responses", "alpha-haiku-4-5", "translated"],
  ["responses", "beta-5", "translated"],
  ["responses", "gamma-3-flash", "translated"],
] as const;

const VENDOR = { "alpha-haiku-4-5": "alpha", "beta-5": "beta", "gamma-3-flash": "gamma" } as const;

async function expectOneUnbilledRecord(requestId: string | null, status: number) {
  const records = await recordsOf(h, requestId);
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ status, upstream_status: 200, cost_usd: 0, input_tokens: 0, output_tokens: 0 });
}

describe("a malformed 200 to a JSON call is a 502 in the caller's format naming the vendor", () => {
  for (const [format, model, route] of ROUTES) {
    for (const [shape, answer] of Object.entries(JSON_SHAPES)) {
      test(`${format} → ${model} (${route}): ${shape}`, async () => {
        bad.script(answer);
        const res = await clientCall(h, format, model, false);
        expect(res.status).toBe(502);
        expect(res.headers.get("content-type")).toStartWith("application/json");
        const text = await res.text();
        expect(text).not.toContain(MARK);
        expect(text).not.toContain("Internal error");
        expect(errorMessageOf(format, JSON.parse(text))).toContain(`The ${VENDOR[model]} upstream answered 200 with`);
        await expectOneUnbilledRecord(res.headers.get("x-request-id"), 502);
      });
    }
  }
});

describe("a malformed 200 to a stream: only the in-band error, once, and nothing after it", () => {
  for (const [format, model, route] of ROUTES) {
    for (const [shape, answer] of Object.entries(STREAM_SHAPES)) {
      test(`${format} → ${model} (${route}): ${shape}`, async () => {
        bad.script({ ...answer, body: [...answer.body] });
        const res = await clientCall(h, format, model, true);
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).not.toContain(MARK);
        if (format === "chat") {
          // One error chunk, then the one [DONE], then nothing.
          expect(text.match(/"error"/g)).toHaveLength(1);
          expect(text.match(/data: \[DONE\]/g)).toHaveLength(1);
          expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
          expect(text).toContain(`The ${VENDOR[model]} upstream`);
        } else {
          expect(text.match(/event: error/g)).toHaveLength(1);
          expect(text).not.toContain("message_stop");
          expect(text).not.toContain("response.completed");
          // A Responses stream's error is followed by the response it ends as failed.
          const frames = text.trimEnd().split("\n\n");
          if (format === "responses") {
            expect(frames.at(-2)).toStartWith("event: error");
            expect(frames.at(-1)).toStartWith("event: response.failed");
            expect(text.match(/event: response.failed/g)).toHaveLength(1);
          } else {
            expect(frames.at(-1)).toStartWith("event: error");
          }
          expect(text).toContain(`The ${VENDOR[model]} upstream`);
        }
        await expectOneUnbilledRecord(res.headers.get("x-request-id"), 502);
      });
    }
  }

  test("a stream call answered with a JSON or HTML body (no event stream) is a plain 502", async () => {
    for (const [format, model] of [
      ["chat", "beta-5"],
      ["messages", "alpha-haiku-4-5"],
    ] as const) {
      bad.script({ type: "text/html", body: `<html>${MARK}</html>` });
      const res = await clientCall(h, format, model, true);
      expect(res.status).toBe(502);
      const text = await res.text();
      expect(text).not.toContain(MARK);
      expect(errorMessageOf(format, JSON.parse(text))).toContain("where a stream was due");
      await expectOneUnbilledRecord(res.headers.get("x-request-id"), 502);
    }
  });

  test("a vendor error inside a 200 is the vendor's error, as a 502", async () => {
    bad.script({
      type: "application/json",
      body: JSON.stringify({ error: { message: "quota backend unavailable", type: "server_error" } }),
    });
    const res = await clientCall(h, "chat", "beta-5", false);
    expect(res.status).toBe(502);
    expect(errorMessageOf("chat", await res.json())).toBe(
      "The beta upstream answered 200 with an error: quota backend unavailable",
    );
  });
});

describe("nothing is written after a stream's terminal frame", () => {
  const after = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${MARK}"}}\n\ndata: {"${MARK}":1}\n\n${MARK}`;
  test("an upstream's bytes after message_stop or [DONE], in the same chunk or later, are not relayed", async () => {
    for (const [format, model, frames] of [
      ["messages", "alpha-haiku-4-5", messagesStream()],
      ["chat", "beta-5", chatStream()],
    ] as const) {
      for (const body of [[frames.join("") + after], [...frames, after]]) {
        bad.script({ type: "text/event-stream", body });
        const res = await clientCall(
          h,
          format,
          model,
          true,
          format === "chat" ? { stream_options: { include_usage: true } } : {},
        );
        const text = await res.text();
        expect(text).not.toContain(MARK);
        expect(
          text.endsWith(
            format === "chat" ? "data: [DONE]\n\n" : 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
          ),
        ).toBe(true);
        const [r] = await recordsOf(h, res.headers.get("x-request-id"));
        expect(r).toMatchObject({ status: 200, output_tokens: 5 });
      }
    }
  });
});

describe("other requests go on", () => {
  test("after all of the above, a good reply from the same vendor is relayed and billed", async () => {
    bad.script({
      type: "application/json",
      body: JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "beta-5",
        choices: [{ index: 0, message: { role: "assistant", content: "Fine." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
      }),
    });
    const res = await clientCall(h, "chat", "beta-5", false);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe("Fine.");
    const [r] = await recordsOf(h, res.headers.get("x-request-id"));
    expect(r).toMatchObject({ status: 200, upstream_status: 200, input_tokens: 9, output_tokens: 2, estimated: false });
    expect(r!.cost_usd).toBeCloseTo((9 * 1.25 + 2 * 6.25) / 1e6, 12);
  });
});

describe("garbage in the middle of a passthrough stream is never relayed", () => {
  // A good start (the first-frame guard lets it through), then text that is not an event:
  // whole, cut across chunks, or inside a data line (HTML, a JSON payload cut off on its line).
  const middles: Record<string, string[]> = {
    "an HTML page after the first events": [`<html><body>${MARK}</body></html>\n\n`],
    "garbage split across chunks": [`${MARK.slice(0, 4)}`, `${MARK.slice(4)} lorem\n\n`],
    "a data line that is not JSON": [`data: <h1>${MARK}</h1>\n\n`],
    "a JSON payload cut off on its line": [`data: {"type":"${MARK}","choices":[{"delta":{"content":"Hel\n\n`],
  };
  // Each stream cut after its first text ("Hello"): output was relayed before the garbage.
  for (const [format, model, frames, good] of [
    ["messages", "alpha-haiku-4-5", messagesStream(), 3],
    ["chat", "beta-5", chatStream(), 2],
  ] as const) {
    for (const [shape, middle] of Object.entries(middles)) {
      test(`${format} → ${model}: ${shape}`, async () => {
        bad.script({ type: "text/event-stream", body: [...frames.slice(0, good), ...middle, ...frames.slice(good)] });
        const res = await clientCall(h, format, model, true);
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).not.toContain(MARK);
        // The good start went out as it came, then only the in-band error naming the vendor.
        expect(text.startsWith(frames.slice(0, good).join(""))).toBe(true);
        expect(text).toContain(`The ${VENDOR[model]} upstream sent text that is not server-sent events`);
        if (format === "chat") {
          expect(text.match(/data: \[DONE\]/g)).toHaveLength(1);
          expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
        } else {
          expect(text).not.toContain("message_stop");
          expect(text.trimEnd().split("\n\n").at(-1)).toStartWith("event: error");
        }
        const [r] = await recordsOf(h, res.headers.get("x-request-id"));
        // What the client saw: a stream that failed midway, after output was relayed.
        expect(r).toMatchObject({ status: 502, upstream_status: 200 });
        expect(r!.output_tokens).toBeGreaterThan(0);
      });
    }
  }

  test("with continuation on, the garbage is never relayed and the reply goes on from the next attempt", async () => {
    const frames = chatStream();
    let n = 0;
    bad.script(() =>
      ++n === 1
        ? { type: "text/event-stream", body: [...frames.slice(0, 2), `<html><body>${MARK}</body></html>\n\n`] }
        : { type: "text/event-stream", body: chatStream({ text: "Hello there." }) },
    );
    const res = await clientCall(going, "chat", "beta-5", true);
    const text = await res.text();
    expect(text).not.toContain(MARK);
    expect(text).not.toContain("not server-sent events");
    const said = [...text.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join("");
    expect(said).toBe("Hello there.");
    const [r] = await recordsOf(going, res.headers.get("x-request-id"));
    expect(r).toMatchObject({ status: 200, continuations: 1, attempts: 2 });
  });

  test("with continuation on, a continuation that answers an empty stream is not taken for the reply's end", async () => {
    const frames = chatStream();
    let n = 0;
    bad.script(() =>
      ++n === 1
        ? { type: "text/event-stream", body: [...frames.slice(0, 2), `<html><body>${MARK}</body></html>\n\n`] }
        : { type: "text/event-stream", body: "" },
    );
    const res = await clientCall(going, "chat", "beta-5", true);
    const text = await res.text();
    expect(text).not.toContain(MARK);
    expect(text).not.toContain('"finish_reason":"stop"');
    const [r] = await recordsOf(going, res.headers.get("x-request-id"));
    expect(r!.status).toBe(502);
  });

  test("a vendor's stream with CRLF line ends and its lines cut across chunks is relayed whole", async () => {
    const frames = chatStream().map((f) => f.replace(/\n/g, "\r\n"));
    const all = frames.join("");
    // Cut into 7-byte pieces: lines and CRLF pairs split everywhere.
    const pieces = all.match(/[\s\S]{1,7}/g)!;
    bad.script({ type: "text/event-stream", body: pieces });
    const res = await clientCall(h, "chat", "beta-5", true, { stream_options: { include_usage: true } });
    const text = await res.text();
    expect(text.replace(/\r\n/g, "\n")).toBe(chatStream().join(""));
    const [r] = await recordsOf(h, res.headers.get("x-request-id"));
    expect(r).toMatchObject({ status: 200, input_tokens: 12, output_tokens: 5 });
  });
});
