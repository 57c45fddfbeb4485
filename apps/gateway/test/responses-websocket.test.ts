/**
 * The Responses format over WebSocket, driven by the runtime's own WebSocket client: several turns
 * over one socket, continuation with `previous_response_id` (stored or not), `generate: false`
 * warm-up, a dropped socket billed like a dropped stream, limits per turn, and the 426 an agent
 * needs to fall back to HTTP at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";
import { SpecWatch } from "./support/open-responses";

let h: Harness;
let off: Harness;
// Every frame's response snapshot, item and part is held to the Open Responses schema.
const spec = new SpecWatch();
beforeAll(async () => {
  h = await startHarness();
  off = await startHarness({ TURNPIKE_RESPONSES_WEBSOCKET: "off" });
});
afterEach(async () => {
  await spec.settle();
  expect(spec.problems).toEqual([]);
});
afterAll(async () => {
  await h.close();
  await off.close();
  expect(spec.checked).toBeGreaterThan(0);
});

type Frame = Record<string, any>;

/** A socket with a queue of the frames it received, read in order. */
class Socket {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (e) => {
      spec.frame(String(e.data));
      this.frames.push(JSON.parse(String(e.data)));
      for (const w of this.waiters.splice(0)) w();
    });
    ws.addEventListener("close", () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static open(base: string, key: string): Promise<Socket> {
    // The runtime's client takes handshake headers as an option of its own (not in the DOM typings).
    const options = {
      headers: { authorization: `Bearer ${key}`, "openai-beta": "responses_websockets=2026-02-06" },
    } as unknown as string[];
    const ws = new WebSocket(`${base.replace("http", "ws")}/v1/responses`, options);
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", () => resolve(new Socket(ws)), { once: true });
      ws.addEventListener("error", () => reject(new Error("the socket did not open")), { once: true });
    });
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** The frames from `from` on, once one of them matches `done` (bounded by the test's timeout). */
  async until(from: number, done: (f: Frame) => boolean): Promise<Frame[]> {
    for (;;) {
      const got = this.frames.slice(from);
      if (got.some(done)) return got;
      if (this.closed) throw new Error(`socket closed after ${JSON.stringify(got.map((f) => f.type))}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** One turn: its frames up to its terminal one. */
  async turn(frame: Frame): Promise<Frame[]> {
    const from = this.frames.length;
    this.send({ type: "response.create", ...frame });
    return this.until(from, (f) =>
      ["response.completed", "response.failed", "response.incomplete", "error"].includes(f.type),
    );
  }
}

const user = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];
const completed = (frames: Frame[]) => frames.find((f) => f.type === "response.completed")!.response;

async function usageRows(keyId: string): Promise<any[]> {
  const res = await fetch(`${h.url}/admin/usage?key_id=${keyId}`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as any).data;
}

/** Waits until the ledger holds `n` records for the key (written after the stream ends). */
async function rowsWhen(keyId: string, ok: (rows: any[]) => boolean): Promise<any[]> {
  for (let i = 0; i < 200; i++) {
    const rows = await usageRows(keyId);
    if (ok(rows)) return rows;
    await Bun.sleep(25);
  }
  throw new Error("the ledger never showed the expected records");
}

async function newKey(body: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const res = await fetch(`${h.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { key: string; id: string };
}

describe("Responses over WebSocket", () => {
  test("several turns over one socket, each its SSE events as frames, each metered", async () => {
    const k = await newKey({ name: "ws-turns" });
    const s = await Socket.open(h.url, k.key);
    const first = await s.turn({ model: "beta-5", store: false, input: user("say hello") });
    const types = first.map((f) => f.type);
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_text.delta");
    expect(types.at(-1)).toBe("response.completed");
    // The same numbering the SSE route sends.
    expect(first.map((f) => f.sequence_number)).toEqual(first.map((_, i) => i));
    const reply1 = completed(first);
    expect(reply1.output[0].content[0].text.length).toBeGreaterThan(0);

    // Turn 2 continues turn 1 by id although nothing was stored: the socket remembers it.
    const before = h.gw.simulator!.requests.length;
    const second = await s.turn({
      model: "beta-5",
      store: false,
      previous_response_id: reply1.id,
      input: user("and once more"),
    });
    expect(second.at(-1)!.type).toBe("response.completed");
    // Every snapshot names the reply it continues; the first turn's named none.
    expect(reply1.previous_response_id).toBeNull();
    for (const f of second.filter((f) => f.response))
      expect(`${f.type} ${f.response.previous_response_id}`).toBe(`${f.type} ${reply1.id}`);
    const upstream = JSON.stringify(h.gw.simulator!.requests.slice(before).at(-1)!.body);
    expect(upstream).toContain("say hello");
    expect(upstream).toContain(JSON.stringify(reply1.output[0].content[0].text).slice(1, -1));
    expect(upstream).toContain("and once more");

    // A third turn on a different model, same socket.
    const third = await s.turn({ model: "alpha-haiku-4-5", input: "a bare string input" });
    expect(completed(third).model).toBe("alpha-haiku-4-5");

    const rows = await rowsWhen(k.id, (r) => r.length >= 3);
    expect(rows.length).toBe(3);
    for (const row of rows) {
      expect(row.status).toBe(200);
      expect(row.stream).toBe(true);
      expect(row.input_tokens).toBeGreaterThan(0);
      expect(row.output_tokens).toBeGreaterThan(0);
    }
    s.ws.close();
  }, 20_000);

  test("a stored reply from the HTTP route can be continued over the socket", async () => {
    const k = await newKey({ name: "ws-stored" });
    const res = await spec.fetch(`${h.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "beta-5", input: "remember the word tangerine" }),
    });
    const stored = (await res.json()) as any;
    const s = await Socket.open(h.url, k.key);
    const before = h.gw.simulator!.requests.length;
    const next = await s.turn({ model: "beta-5", previous_response_id: stored.id, input: user("what was the word?") });
    expect(next.at(-1)!.type).toBe("response.completed");
    expect(completed(next).previous_response_id).toBe(stored.id);
    expect(JSON.stringify(h.gw.simulator!.requests.slice(before).at(-1)!.body)).toContain("tangerine");
    s.ws.close();
  }, 20_000);

  test("generate:false warms a conversation: an id to continue from, no model called, nothing billed", async () => {
    const k = await newKey({ name: "ws-warm" });
    const s = await Socket.open(h.url, k.key);
    const before = h.gw.simulator!.requests.length;
    const warm = await s.turn({
      model: "beta-5",
      generate: false,
      instructions: "be brief",
      input: user("the project is called Quokka"),
    });
    expect(warm.map((f) => f.type)).toEqual(["response.created", "response.completed"]);
    const warmed = completed(warm);
    expect(warmed.id).toMatch(/^resp_/);
    expect(warmed.output).toEqual([]);
    expect(warmed).toMatchObject({ instructions: "be brief", previous_response_id: null, background: false });
    expect(warmed.completed_at).toBeGreaterThanOrEqual(warmed.created_at);
    expect(h.gw.simulator!.requests.length).toBe(before);

    const next = await s.turn({
      model: "beta-5",
      previous_response_id: warmed.id,
      input: user("what is the project called?"),
    });
    expect(next.at(-1)!.type).toBe("response.completed");
    expect(h.gw.simulator!.requests.length).toBe(before + 1);
    expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain("Quokka");
    const rows = await rowsWhen(k.id, (r) => r.length >= 1);
    expect(rows.length).toBe(1);
    s.ws.close();
  }, 20_000);

  test("a dropped socket mid-turn is billed like a dropped stream", async () => {
    const k = await newKey({ name: "ws-drop" });
    const s = await Socket.open(h.url, k.key);
    s.send({ type: "response.create", model: "beta-5", input: user("tell me everything [sim chunks=60 latency=40]") });
    await s.until(0, () => s.frames.filter((f) => f.type === "response.output_text.delta").length >= 4);
    s.ws.close();
    const [row] = await rowsWhen(k.id, (r) => r.length >= 1);
    expect(row.aborted).toBe(true);
    expect(row.estimated).toBe(true);
    expect(row.stream).toBe(true);
    expect(row.input_tokens).toBeGreaterThan(5);
    expect(row.output_tokens).toBeGreaterThanOrEqual(4);
    expect(row.output_tokens).toBeLessThan(60);
  }, 20_000);

  test("every turn is limited: over the key's rpm a turn gets a 429 error frame, and the socket stays usable", async () => {
    const k = await newKey({ name: "ws-rpm", rpm: 1 });
    const s = await Socket.open(h.url, k.key);
    const ok = await s.turn({ model: "beta-5", input: user("one") });
    expect(ok.at(-1)!.type).toBe("response.completed");
    const refused = await s.turn({ model: "beta-5", input: user("two") });
    expect(refused).toHaveLength(1);
    expect(refused[0]!.type).toBe("error");
    expect(refused[0]!.status).toBe(429);
    expect(refused[0]!.error.code).toBe("rate_limit_exceeded");
    expect(Number(refused[0]!.headers["retry-after"])).toBeGreaterThan(0);
    // Bad input is an error frame in the same shape, and the socket still answers.
    const bad = await s.turn({ input: user("no model") });
    expect(bad[0]!.status).toBe(400);
    expect(bad[0]!.error.message).toContain("model");
    expect(s.closed).toBe(false);
    s.ws.close();
  }, 20_000);

  test("a wrong key is refused at the handshake; a frame of another type is an error frame", async () => {
    const res = await fetch(`${h.url}/v1/responses`, {
      headers: {
        authorization: "Bearer sk-wrong",
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    });
    expect(res.status).toBe(401);
    const s = await Socket.open(h.url, h.key);
    const from = s.frames.length;
    s.send({ type: "session.update" });
    const [err] = await s.until(from, (f) => f.type === "error");
    expect(err!.status).toBe(400);
    expect(err!.error.message).toContain("session.update");
    s.ws.close();
  }, 20_000);

  test("TURNPIKE_RESPONSES_WEBSOCKET=off answers the upgrade 426 at once; so does a GET without an upgrade", async () => {
    const res = await fetch(`${off.url}/v1/responses`, {
      headers: {
        authorization: `Bearer ${off.key}`,
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    });
    expect(res.status).toBe(426);
    expect(((await res.json()) as any).error.message).toContain("TURNPIKE_RESPONSES_WEBSOCKET=off");
    await expect(Socket.open(off.url, off.key)).rejects.toThrow();
    const plain = await fetch(`${h.url}/v1/responses`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(plain.status).toBe(426);
    // The HTTP route is unchanged.
    const post = await off.call("/v1/responses", {
      method: "POST",
      body: JSON.stringify({ model: "beta-5", input: "hi" }),
    });
    expect(post.status).toBe(200);
  }, 20_000);
});
