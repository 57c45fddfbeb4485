/**
 * A passthrough continued in the upstream's own terms: a Responses client on a Responses
 * deployment and a generateContent client on a generateContent one, each stream cut after three
 * text deltas in each of the four ways. The client reads one stream: the event list an uncut
 * stream of the same reply gives (ids, times and the split of the text into deltas aside), the
 * upstream's response id and item ids all through, `sequence_number` 0…n, one terminal event
 * with the whole text in every done event, and the usage of both attempts summed — as the
 * ledger bills it (`attempts: 2, continuations: 1`). A cut inside a function call's arguments
 * or a reasoning summary still ends with the upstream's in-band error. Then the official
 * clients' stream helpers read a continued stream.
 */
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { Harness } from "../harness";
import { withoutIds } from "../conformance/outcome";
import { EPSILON, GAMMA } from "../conformance/upstreams";
import { bodyOf, stream, type Streamed } from "./cells";
import { credentialOf, gateway, PROMPT, rowOf, WORDS } from "./setup";

const KINDS = ["reset", "idle", "error", "truncate"] as const;

let h: Harness;
beforeAll(async () => {
  h = await gateway();
});
afterAll(() => h.close());

type Event = Record<string, any>;

const events = (s: Streamed): Event[] => s.frames.map((f) => JSON.parse(f.data) as Event);

/** Fields that differ between two calls of the same reply (ids, times) or between attempts (usage). */
const VARYING = new Set([
  "id",
  "item_id",
  "created_at",
  "completed_at",
  "sequence_number",
  "usage",
  "usageMetadata",
  "responseId",
]);

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !VARYING.has(k))
      .map(([k, x]) => [k, strip(x)]),
  );
}

/** A Responses stream's events with the text deltas of one part joined, ids and times left out. */
function responsesShape(list: Event[]): unknown[] {
  const out: Event[] = [];
  for (const e of list) {
    const prev = out.at(-1);
    if (
      prev &&
      e.type === "response.output_text.delta" &&
      prev.type === e.type &&
      prev.output_index === e.output_index &&
      prev.content_index === e.content_index
    ) {
      prev.delta += e.delta;
      continue;
    }
    out.push({ ...e });
  }
  return out.map(strip);
}

/** A generateContent stream's chunks: its text joined, the rest of each chunk (ids and usage aside) in order. */
function generateShape(list: Event[]): { text: string; ends: unknown[] } {
  let text = "";
  const ends: unknown[] = [];
  for (const c of list) {
    for (const p of c.candidates?.[0]?.content?.parts ?? []) text += p.text ?? "";
    if (c.candidates?.[0]?.finishReason) ends.push(strip({ ...c, candidates: [{ ...c.candidates[0], content: {} }] }));
  }
  return { text, ends };
}

const content = (o: Parameters<typeof withoutIds>[0]) => {
  const { usage: _usage, ...rest } = withoutIds(o);
  return rest;
};

describe("Responses → Responses, cut after three text deltas", () => {
  for (const kind of KINDS) {
    test(`${kind}: one stream in the upstream's ids, numbered 0…n, the whole text, the usage summed`, async () => {
      const body = bodyOf("responses", EPSILON.model, PROMPT);
      const whole = await stream(h, "responses", body, EPSILON.model);
      h.gw.simulator!.fault(credentialOf(EPSILON), { cut_after: 3, cut: kind, times: 1 });
      const cut = await stream(h, "responses", body, EPSILON.model);
      expect(cut.error).toBeUndefined();
      expect(content(cut.outcome)).toEqual(content(whole.outcome));
      const list = events(cut);
      expect(responsesShape(list)).toEqual(responsesShape(events(whole)));
      expect(list.map((e) => e.sequence_number)).toEqual(list.map((_, i) => i));
      // The upstream's response id and item id from the first event to the last.
      const id = list[0]!.response.id;
      expect(id).toMatch(/^resp_sim/);
      expect(list.filter((e) => e.response).map((e) => e.response.id)).toEqual(
        list.filter((e) => e.response).map(() => id),
      );
      const item = list.find((e) => e.type === "response.output_item.added")!.item.id;
      expect(item).toMatch(/^msg_sim/);
      expect(new Set(list.filter((e) => e.item_id).map((e) => e.item_id))).toEqual(new Set([item]));
      // The done events of the continued part and item hold the whole text.
      expect(list.find((e) => e.type === "response.output_text.done")!.text).toBe(WORDS);
      expect(list.find((e) => e.type === "response.content_part.done")!.part.text).toBe(WORDS);
      expect(list.find((e) => e.type === "response.output_item.done")!.item.content[0].text).toBe(WORDS);
      const last = list.at(-1)!;
      expect(last.type).toBe("response.completed");
      expect(last.response.output[0]).toMatchObject({ id: item, status: "completed" });
      const row = await rowOf(h, cut.res);
      expect([row.status, row.attempts, row.continuations]).toEqual([200, 2, 1]);
      expect(last.response.usage).toMatchObject({
        input_tokens: row.input_tokens,
        output_tokens: row.output_tokens,
        total_tokens: row.input_tokens + row.output_tokens,
      });
      expect(row.input_tokens).toBeGreaterThan(whole.outcome.usage.input);
    });
  }

  test("after a whole reasoning item: the vendor's item (its encrypted content) kept, the message continued", async () => {
    const body = {
      ...bodyOf("responses", EPSILON.model, `Think. [sim think chunks=8 text="${WORDS}"]`),
      reasoning: { effort: "low", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    };
    const whole = await stream(h, "responses", body, EPSILON.model);
    h.gw.simulator!.fault(credentialOf(EPSILON), { cut_after: 3, cut: "error", times: 1 });
    const cut = await stream(h, "responses", body, EPSILON.model);
    expect(cut.error).toBeUndefined();
    const list = events(cut);
    expect(responsesShape(list)).toEqual(responsesShape(events(whole)));
    const output = list.at(-1)!.response.output;
    expect(output.map((i: Event) => i.type)).toEqual(["reasoning", "message"]);
    expect(output[0].encrypted_content).toBe(events(whole).at(-1)!.response.output[0].encrypted_content);
    expect(output[0].id).toBe(list.find((e) => e.type === "response.output_item.added")!.item.id);
    expect(output[1].content[0].text).toBe(WORDS);
  });

  test("the continued reply is stored as the client read it, and a next turn goes on from it", async () => {
    h.gw.simulator!.fault(credentialOf(EPSILON), { cut_after: 3, cut: "truncate", times: 1 });
    const cut = await stream(h, "responses", bodyOf("responses", EPSILON.model, PROMPT), EPSILON.model);
    const id = events(cut).at(-1)!.response.id;
    const got = await h.call(`/v1/responses/${id}`, { method: "GET" });
    expect(got.status).toBe(200);
    const stored = (await got.json()) as Event;
    expect(stored).toMatchObject({ id, status: "completed" });
    expect(stored.output[0].content[0].text).toBe(WORDS);
    const from = h.gw.simulator!.requests.length;
    const next = await stream(
      h,
      "responses",
      { ...bodyOf("responses", EPSILON.model, 'And? [sim text="Done."]'), previous_response_id: id },
      EPSILON.model,
    );
    expect(next.outcome.text).toBe("Done.");
    // The whole conversation went upstream: the prompt, the continued reply as the client read it, the new turn.
    const sent = JSON.stringify(h.gw.simulator!.requests.slice(from).at(-1)!.body);
    expect(sent).toContain(WORDS);
    expect(sent).toContain("Tell me.");
  });

  test("inside a function call's arguments: the upstream's in-band error, as before", async () => {
    const body = bodyOf("responses", EPSILON.model, "Weather? [sim tools=1 chunks=8]", true);
    h.gw.simulator!.fault(credentialOf(EPSILON), { cut_after: 2, cut_in: "tool", cut: "error", times: 1 });
    const cut = await stream(h, "responses", body, EPSILON.model, true);
    const last = JSON.parse(cut.frames.at(-1)!.data);
    expect(last).toMatchObject({ type: "error", sequence_number: 999999 });
    expect(cut.frames.some((f) => f.event === "response.function_call_arguments.done")).toBe(false);
    const row = await rowOf(h, cut.res);
    expect([row.status, row.continuations]).toEqual([502, 0]);
  });

  test("inside a reasoning summary: the in-band error, as before", async () => {
    const body = {
      ...bodyOf("responses", EPSILON.model, `Think. [sim think chunks=8 text="${WORDS}"]`),
      reasoning: { effort: "low", summary: "auto" },
    };
    h.gw.simulator!.fault(credentialOf(EPSILON), { cut_after: 1, cut_in: "thinking", cut: "truncate", times: 1 });
    const cut = await stream(h, "responses", body, EPSILON.model, true);
    expect(cut.frames.at(-1)!.event).toBe("response.failed");
    expect(cut.frames.some((f) => f.event === "response.output_text.delta")).toBe(false);
    expect((await rowOf(h, cut.res)).continuations).toBe(0);
  });
});

describe("generateContent → generateContent, cut after three text deltas", () => {
  for (const kind of KINDS) {
    test(`${kind}: one responseId, the whole text, one finish, the usage summed`, async () => {
      const body = bodyOf("generate", GAMMA.model, PROMPT);
      const whole = await stream(h, "generate", body, GAMMA.model);
      h.gw.simulator!.fault(credentialOf(GAMMA), { cut_after: 3, cut: kind, times: 1 });
      const cut = await stream(h, "generate", body, GAMMA.model);
      expect(cut.error).toBeUndefined();
      expect(content(cut.outcome)).toEqual(content(whole.outcome));
      const list = events(cut);
      expect(generateShape(list)).toEqual(generateShape(events(whole)));
      expect(generateShape(list).text).toBe(WORDS);
      // The upstream's own response id on every chunk, the continuation's included.
      const id = list[0]!.responseId;
      expect(typeof id).toBe("string");
      expect(list.map((c) => c.responseId)).toEqual(list.map(() => id));
      expect(list.filter((c) => c.candidates?.[0]?.finishReason)).toHaveLength(1);
      expect(list.at(-1)!.candidates[0].finishReason).toBe("STOP");
      const row = await rowOf(h, cut.res);
      expect([row.status, row.attempts, row.continuations]).toEqual([200, 2, 1]);
      expect(list.at(-1)!.usageMetadata).toMatchObject({
        promptTokenCount: row.input_tokens,
        candidatesTokenCount: row.output_tokens,
      });
    });
  }
});

describe("the official clients read a continued passthrough", () => {
  test("openai responses.stream(…).finalResponse(): the whole text, the upstream's response id", async () => {
    const openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    h.gw.simulator!.fault(credentialOf(EPSILON), { cut_after: 2, cut: "reset", times: 1 });
    const texts: string[] = [];
    const s = openai.responses.stream({ model: EPSILON.model, input: PROMPT });
    s.on("response.output_text.delta", (e) => texts.push(e.delta));
    const final = await s.finalResponse();
    expect(final.output_text).toBe(WORDS);
    expect(texts.join("")).toBe(WORDS);
    expect(final.id).toMatch(/^resp_sim/);
    expect(final.status).toBe("completed");
  });

  test("@google/genai generateContentStream: the whole text, one finish", async () => {
    const ai = new GoogleGenAI({ apiKey: h.key, httpOptions: { baseUrl: h.url } });
    h.gw.simulator!.fault(credentialOf(GAMMA), { cut_after: 2, cut: "error", times: 1 });
    let text = "";
    const finishes: string[] = [];
    for await (const chunk of await ai.models.generateContentStream({ model: GAMMA.model, contents: PROMPT })) {
      text += chunk.text ?? "";
      const finish = chunk.candidates?.[0]?.finishReason;
      if (finish) finishes.push(finish);
    }
    expect(text).toBe(WORDS);
    expect(finishes).toEqual(["STOP"]);
  });
});
