/** The Responses WebSocket transport: a turn cut after three deltas is continued, its frames one numbered stream. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness } from "../harness";
import { gateway, PROMPT, WORDS } from "./setup";

let h: Harness;
beforeAll(async () => {
  h = await gateway();
});
afterAll(() => h.close());

type Frame = Record<string, any>;

/** One `response.create` over a fresh socket: its frames up to the terminal one. */
async function turn(frame: Frame): Promise<Frame[]> {
  const options = {
    headers: { authorization: `Bearer ${h.key}`, "openai-beta": "responses_websockets=2026-02-06" },
  } as unknown as string[]; // the runtime's client takes handshake headers as an option of its own
  const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/responses`, options);
  const frames: Frame[] = [];
  const done = new Promise<void>((resolve, reject) => {
    ws.addEventListener("message", (e) => {
      const f = JSON.parse(String(e.data)) as Frame;
      frames.push(f);
      if (["response.completed", "response.failed", "response.incomplete", "error"].includes(f.type)) resolve();
    });
    ws.addEventListener("close", () => reject(new Error("the socket closed before the turn ended")));
  });
  await new Promise<void>((resolve) => ws.addEventListener("open", () => resolve(), { once: true }));
  ws.send(JSON.stringify({ type: "response.create", ...frame }));
  await done;
  ws.close();
  return frames;
}

test("a cut turn over chat is continued: the whole text, one numbering, one terminal frame", async () => {
  h.gw.simulator!.fault("simulator-beta", { cut_after: 3, cut: "reset", times: 1 });
  const frames = await turn({
    model: "beta-5",
    store: false,
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: PROMPT }] }],
  });
  expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
  expect(frames.at(-1)!.type).toBe("response.completed");
  expect(frames.filter((f) => f.type === "response.completed")).toHaveLength(1);
  const text = frames
    .filter((f) => f.type === "response.output_text.delta")
    .map((f) => f.delta)
    .join("");
  expect(text).toBe(WORDS);
  expect(frames.at(-1)!.response.output[0].content[0].text).toBe(WORDS);
  const res = await fetch(`${h.url}/admin/usage`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const rows = ((await res.json()) as { data: Record<string, any>[] }).data;
  expect(rows.find((r) => r.continuations === 1)).toMatchObject({ attempts: 2, status: 200 });
});

test("a cut turn passed through to a Responses deployment goes on in its ids and numbering", async () => {
  h.gw.simulator!.fault("simulator-epsilon", { cut_after: 3, cut: "error", times: 1 });
  const frames = await turn({
    model: "epsilon-5",
    store: false,
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: PROMPT }] }],
  });
  expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
  expect(frames.filter((f) => f.type === "response.completed")).toHaveLength(1);
  const last = frames.at(-1)!;
  expect(last.type).toBe("response.completed");
  // The vendor's response and item ids, from the first frame to the last.
  expect(last.response.id).toBe(frames[0]!.response.id);
  expect(last.response.id).toMatch(/^resp_sim/);
  const item = frames.find((f) => f.type === "response.output_item.added")!.item.id;
  expect(item).toMatch(/^msg_sim/);
  expect(new Set(frames.filter((f) => f.item_id).map((f) => f.item_id))).toEqual(new Set([item]));
  const text = frames
    .filter((f) => f.type === "response.output_text.delta")
    .map((f) => f.delta)
    .join("");
  expect(text).toBe(WORDS);
  expect(frames.find((f) => f.type === "response.output_text.done")!.text).toBe(WORDS);
  expect(last.response.output).toHaveLength(1);
  expect(last.response.output[0]).toMatchObject({ id: item, content: [{ text: WORDS }] });
  const res = await fetch(`${h.url}/admin/usage`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const rows = ((await res.json()) as { data: Record<string, any>[] }).data;
  const row = rows.find((r) => r.model === "epsilon-5" && r.continuations === 1);
  expect(row).toMatchObject({ attempts: 2, status: 200 });
  expect(last.response.usage).toMatchObject({ input_tokens: row!.input_tokens, output_tokens: row!.output_tokens });
});
