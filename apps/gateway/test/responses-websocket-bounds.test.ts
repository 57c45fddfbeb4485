/**
 * The Responses WebSocket's bounds (issue 41, item 7): frames queued on one socket were unbounded
 * (24 frames of 8 MiB took the process from 232 MiB to over a gigabyte, each refused only once its
 * turn came) and one key could open any number of sockets. Now a frame that would pass the
 * socket's bound — frames or bytes not yet answered — is refused on arrival with an error frame,
 * ahead of the turn in flight, and a key's handshake past its socket cap is a 429; both set in the
 * config file's `responses_websocket:`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/config";
import { ConfigError } from "../src/vocabulary/config-error";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";

const dir = mkdtempSync(join(tmpdir(), "turnpike-ws-bounds-"));
const configFile = join(dir, "turnpike.json");
writeFileSync(
  configFile,
  JSON.stringify({
    responses_websocket: { max_queued_frames: 3, max_queued_bytes: 1_000_000, max_sockets_per_key: 2 },
  }),
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TURNPIKE_CONFIG: configFile });
});
/** Every socket a test opened, closed at the end even when the test fails. */
const opened: Socket[] = [];
afterAll(async () => {
  for (const s of opened) s.ws.close();
  await h.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

type Frame = Record<string, any>;

/** A socket and the frames it received, in order. */
class Socket {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (e) => {
      this.frames.push(JSON.parse(String(e.data)));
      for (const w of this.waiters.splice(0)) w();
    });
    ws.addEventListener("close", () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static open(key: string): Promise<Socket> {
    const options = { headers: { authorization: `Bearer ${key}` } } as unknown as string[]; // Bun's WebSocket takes headers in its options
    const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/responses`, options);
    return new Promise((resolve, reject) => {
      ws.addEventListener(
        "open",
        () => {
          const s = new Socket(ws);
          opened.push(s);
          resolve(s);
        },
        { once: true },
      );
      ws.addEventListener("error", () => reject(new Error("the socket did not open")), { once: true });
    });
  }

  /** Waits (bounded by the test's timeout) until `n` frames match `done`. */
  async until(done: (f: Frame) => boolean, n = 1): Promise<Frame[]> {
    for (;;) {
      if (this.frames.filter(done).length >= n) return this.frames;
      if (this.closed) throw new Error(`socket closed after ${JSON.stringify(this.frames.map((f) => f.type))}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
}

/** A create frame whose reply waits `ms` before its first byte (the simulator's directive), padded to about `pad` bytes. */
const create = (ms: number, pad = 0) =>
  JSON.stringify({
    type: "response.create",
    model: "beta-5",
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: `slow [sim first_byte=${ms}]` }] }],
    metadata: { pad: "p".repeat(pad) },
  });

const isError = (f: Frame) => f.type === "error";
const isDone = (f: Frame) => f.type === "response.completed";

async function newKey(): Promise<{ key: string; id: string }> {
  const res = await fetch(`${h.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    body: JSON.stringify({ name: "ws-bounds" }),
  });
  return (await res.json()) as { key: string; id: string };
}

/** The handshake's HTTP answer when it is refused (a WebSocket client sees only that it failed). */
async function handshake(key: string): Promise<{ status: number; body: Frame }> {
  const res = await fetch(`${h.url}/v1/responses`, {
    headers: {
      authorization: `Bearer ${key}`,
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-key": btoa("0123456789abcdef"),
      "sec-websocket-version": "13",
    },
  });
  return { status: res.status, body: res.status === 101 ? {} : ((await res.json()) as Frame) };
}

describe("frames queued on one socket", () => {
  test("past max_queued_frames: refused on arrival with a 429 error frame, ahead of the turn in flight; the queued ones run", async () => {
    const s = await Socket.open((await newKey()).key);
    // One turn in flight (its reply waits 5 s) and two behind it fill the bound of 3.
    s.ws.send(create(5000));
    s.ws.send(create(0));
    s.ws.send(create(0));
    s.ws.send(create(0));
    s.ws.send(create(0));
    const frames = await s.until(isDone, 3);
    const errors = frames.filter(isError);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toEqual({
      type: "error",
      status: 429,
      error: {
        type: "rate_limit_error",
        message:
          "This socket already holds 3 frames (" +
          (Buffer.byteLength(create(5000)) + 2 * Buffer.byteLength(create(0))) +
          " bytes) not yet answered; at most 3 frames and 1000000 bytes are held (responses_websocket.max_queued_frames, max_queued_bytes). Send the next frame once a reply has completed.",
      },
      headers: {},
    });
    // Refused before the slow turn had answered anything: not queued behind it.
    expect(frames.indexOf(errors[1]!)).toBeLessThan(frames.findIndex((f) => f.type === "response.created"));
    expect(frames.filter(isDone)).toHaveLength(3);
    // Once answered, the socket takes frames again.
    s.ws.send(create(0));
    await s.until(isDone, 4);
    expect(s.frames.filter(isError)).toHaveLength(2);
    s.ws.close();
  }, 60_000);

  test("bytes: a frame over max_queued_bytes is a 413 at once; one that would pass it with the queued frames a 429", async () => {
    const s = await Socket.open((await newKey()).key);
    s.ws.send(create(5000, 600_000));
    s.ws.send(create(0, 1_200_000));
    s.ws.send(create(0, 600_000));
    const frames = await s.until(isDone);
    const errors = frames.filter(isError);
    expect(errors.map((e) => e.status)).toEqual([413, 429]);
    expect(errors[0]!.error).toEqual({
      type: "request_too_large",
      message: `This frame is ${Buffer.byteLength(create(0, 1_200_000))} bytes; a socket holds at most 1000000 bytes of frames (responses_websocket.max_queued_bytes).`,
    });
    expect(frames.indexOf(errors[1]!)).toBeLessThan(frames.findIndex((f) => f.type === "response.created"));
    expect(frames.filter(isDone)).toHaveLength(1);
    s.ws.close();
  }, 60_000);
});

describe("sockets per key", () => {
  test("past max_sockets_per_key the handshake is a 429 in the Responses format; another key, or a closed socket, makes room", async () => {
    const { key } = await newKey();
    const one = await Socket.open(key);
    const two = await Socket.open(key);
    const third = await handshake(key);
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({
      type: "rate_limit_exceeded",
      code: "rate_limit_exceeded",
      message:
        "This key already holds 2 open Responses WebSockets on this gateway, its limit (responses_websocket.max_sockets_per_key); close one first.",
    });
    await expect(Socket.open(key)).rejects.toThrow("the socket did not open");
    // Another key is not held by this one's sockets.
    const other = await Socket.open((await newKey()).key);
    other.ws.close();
    // The two still serve; once one closes, a new socket opens (the close is seen by the server a moment later).
    two.ws.send(create(0));
    await two.until(isDone);
    one.ws.close();
    let again: Socket | undefined;
    for (let i = 0; i < 200 && !again; i++)
      again = await Socket.open(key).catch(() => Bun.sleep(25).then(() => undefined));
    expect(again).toBeDefined();
    again?.ws.close();
    two.ws.close();
  }, 60_000);
});

describe("configuration", () => {
  test("defaults without the section; a bad value is a config error naming it", () => {
    expect(loadConfig({}).websocketLimits).toEqual({
      maxQueuedFrames: 4,
      maxQueuedBytes: 32 * 1024 * 1024,
      maxSocketsPerKey: 16,
    });
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ responses_websocket: { max_queued_frames: 0, sockets: 3 } }));
    let err: unknown;
    try {
      loadConfig({ TURNPIKE_CONFIG: bad });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join("\n");
    expect(problems).toContain("responses_websocket.max_queued_frames: must be a positive whole number");
    expect(problems).toContain("responses_websocket");
    expect(problems).toContain("sockets");
  });
});
