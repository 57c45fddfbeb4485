/**
 * The recorded traffic of real agents and client libraries (`__fixtures__/agents/`, written by
 * `scripts/record-agents.ts`; `manifest.json` names the versions) replayed against every catalog
 * model: each recorded call as it was sent but for its model, streamed and as JSON; each recorded
 * WebSocket session turn by turn, its continuations pointed at the replayed replies. Every call
 * must be answered 2xx with a well-formed reply or stream, and be in the ledger.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_KEY, CATALOG_IDS, startHarness, type Harness } from "./harness";

type Recorded =
  | {
      kind: "http";
      method: string;
      path: string;
      headers: Record<string, string>;
      body: Record<string, unknown> | null;
      status: number;
    }
  | {
      kind: "websocket";
      path: string;
      headers: Record<string, string>;
      frames: Record<string, unknown>[];
      responseIds: string[];
    };

const DIR = join(import.meta.dir, "__fixtures__/agents");
const manifest = JSON.parse(readFileSync(join(DIR, "manifest.json"), "utf8")) as {
  recorded: Record<string, { version: string }>;
};
const corpus = readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => ({
    client: d.name,
    calls: JSON.parse(readFileSync(join(DIR, d.name, "calls.json"), "utf8")) as Recorded[],
  }));

/** The inference routes a replay sends a body to (with their count routes, which do not stream). */
const INFERENCE = new Set(["/v1/messages", "/v1/chat/completions", "/v1/responses"]);
const COUNTS = new Set(["/v1/messages/count_tokens", "/v1/responses/input_tokens"]);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

function headersFor(call: { path: string; headers: Record<string, string> }, key = h.key): Headers {
  const headers = new Headers(call.headers);
  headers.delete("accept-encoding");
  if (call.path.startsWith("/v1/messages")) headers.set("x-api-key", key);
  else headers.set("authorization", `Bearer ${key}`);
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return headers;
}

/** A stream's frames, each checked to be JSON, and how it ended. */
function readStream(path: string, text: string): { frames: Record<string, any>[]; ended: boolean } {
  const data = [...text.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]!);
  const done = data.at(-1) === "[DONE]";
  const frames = data.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d) as Record<string, any>);
  const last = frames.at(-1);
  if (path === "/v1/messages") return { frames, ended: last?.type === "message_stop" };
  if (path === "/v1/chat/completions")
    return { frames, ended: done && frames.some((f) => f.choices?.[0]?.finish_reason) };
  return { frames, ended: ["response.completed", "response.incomplete"].includes(String(last?.type)) };
}

/** Waits until the ledger holds every request id (it is written after each reply ends). */
async function ledgered(ids: string[]): Promise<Map<string, Record<string, any>>> {
  let rows = new Map<string, Record<string, any>>();
  for (let i = 0; i < 200; i++) {
    rows = new Map((await usage(h.keyId)).map((r) => [r.request_id, r]));
    if (ids.every((id) => rows.has(id))) return rows;
    await Bun.sleep(25);
  }
  return rows;
}

async function usage(keyId: string): Promise<Record<string, any>[]> {
  const res = await fetch(`${h.url}/admin/usage?key_id=${keyId}&limit=10000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as { data: Record<string, any>[] }).data;
}

test("the manifest names a recorded version for every client folder", () => {
  for (const { client } of corpus) {
    const name = client.slice(0, client.lastIndexOf("-"));
    expect(`${name}-${manifest.recorded[name]?.version}`).toBe(client);
  }
  expect(Object.keys(manifest.recorded).sort()).toEqual(["ai-sdk", "claude-code", "codex", "opencode"]);
});

test("the gateway refused none of the recorded calls when they were recorded", () => {
  // Real agents' requests are answered, never refused: a refusal in a recording is a fidelity bug
  // to fix (and re-record), not a call to leave out of the replay.
  const refused = corpus.flatMap(({ client, calls }) =>
    calls.flatMap((c, i) => (c.kind === "http" && c.status >= 400 ? [`${client} #${i} ${c.path}: ${c.status}`] : [])),
  );
  expect(refused).toEqual([]);
});

for (const { client, calls } of corpus) {
  describe(`${client}: recorded calls replayed`, () => {
    const replayed: string[] = [];
    const http = calls.filter((c): c is Extract<Recorded, { kind: "http" }> => c.kind === "http");

    http.forEach((call, i) => {
      const name = `#${i} ${call.method} ${call.path}`;
      if (call.method === "GET") {
        test(`${name}: answered as the client reads it`, async () => {
          const res = await fetch(h.url + call.path, { headers: headersFor(call) });
          expect(res.status).toBe(200);
          const body = (await res.json()) as Record<string, any>;
          expect(body.data.length).toBeGreaterThan(0);
          expect(body.models.length).toBe(body.data.length);
        });
        return;
      }
      const body = call.body;
      if (!body || !(INFERENCE.has(call.path) || COUNTS.has(call.path))) return;
      const modes = COUNTS.has(call.path) ? [false] : [true, false];
      for (const model of CATALOG_IDS) {
        for (const stream of modes) {
          test(`${name} → ${model}, ${COUNTS.has(call.path) ? "count" : stream ? "stream" : "JSON"}${call.status < 400 ? "" : ` (recorded answer: ${call.status})`}`, async () => {
            const sent: Record<string, unknown> = { ...structuredClone(body), model };
            if (!COUNTS.has(call.path)) sent.stream = stream;
            if (!stream) delete sent.stream_options;
            const res = await fetch(h.url + call.path, {
              method: "POST",
              headers: headersFor(call),
              body: JSON.stringify(sent),
            });
            const text = await res.text();
            expect({ status: res.status, text: res.status < 300 ? "" : text }).toEqual({ status: 200, text: "" });
            if (COUNTS.has(call.path)) {
              expect(
                Object.values(JSON.parse(text) as Record<string, number>).some((v) => typeof v === "number" && v > 0),
              ).toBe(true);
              return;
            }
            replayed.push(res.headers.get("request-id") ?? res.headers.get("x-request-id")!);
            if (stream) {
              const { frames, ended } = readStream(call.path, text);
              expect(frames.length).toBeGreaterThan(1);
              expect(ended).toBe(true);
            } else {
              const reply = JSON.parse(text) as Record<string, any>;
              expect(reply.id).toBeString();
              if (call.path === "/v1/responses") expect(["completed", "incomplete"]).toContain(reply.status);
            }
          });
        }
      }
    });

    calls.forEach((call, i) => {
      if (call.kind !== "websocket") return;
      for (const model of CATALOG_IDS) {
        test(`#${i} WebSocket session of ${call.frames.length} frames → ${model}`, async () => {
          // A key of its own: its ledger rows are this session's turns.
          const created = await fetch(`${h.url}/admin/keys`, {
            method: "POST",
            headers: { authorization: `Bearer ${ADMIN_KEY}` },
            body: JSON.stringify({ name: `ws ${model}` }),
          });
          const own = (await created.json()) as { key: string; id: string };
          // The runtime's client takes handshake headers as an option of its own.
          const ws = new WebSocket(`${h.url.replace("http", "ws")}${call.path}`, {
            headers: Object.fromEntries(headersFor(call, own.key)),
          } as unknown as string[]);
          const frames: Record<string, any>[] = [];
          let wake: (() => void) | undefined;
          ws.addEventListener("message", (e) => {
            frames.push(JSON.parse(String(e.data)));
            wake?.();
          });
          await new Promise<void>((resolve, reject) => {
            ws.addEventListener("open", () => resolve(), { once: true });
            ws.addEventListener("error", () => reject(new Error("the socket did not open")), { once: true });
          });
          // Recorded reply ids → the ids of the replayed replies, for the turns that continue them.
          const ids = new Map<string, string>();
          // The tool calls of each replayed reply: a continuation answers them, not the recorded ones.
          const callsOf = new Map<string, string[]>();
          let turn = 0;
          let generated = 0;
          for (const recorded of call.frames) {
            const frame: Record<string, unknown> = { ...structuredClone(recorded), model };
            if (typeof frame.previous_response_id === "string") {
              const replayedId = ids.get(frame.previous_response_id);
              frame.previous_response_id = replayedId ?? frame.previous_response_id;
              const open = [...(callsOf.get(replayedId ?? "") ?? [])];
              for (const item of Array.isArray(frame.input) ? (frame.input as Record<string, unknown>[]) : []) {
                if (typeof item.call_id === "string" && String(item.type).endsWith("_output") && open.length)
                  item.call_id = open.shift();
              }
            }
            const from = frames.length;
            ws.send(JSON.stringify(frame));
            if (frame.type !== "response.create") continue;
            const terminal = () =>
              frames
                .slice(from)
                .find((f) =>
                  ["response.completed", "response.incomplete", "response.failed", "error"].includes(f.type),
                );
            while (!terminal()) await new Promise<void>((r) => (wake = r));
            const end = terminal()!;
            expect({ type: end.type, error: end.error ?? end.response?.error ?? null }).toEqual({
              type: "response.completed",
              error: null,
            });
            const recordedId = call.responseIds[turn++];
            if (recordedId) ids.set(recordedId, end.response.id);
            callsOf.set(
              end.response.id,
              (end.response.output as Record<string, unknown>[]).flatMap((o) =>
                typeof o.call_id === "string" ? [o.call_id] : [],
              ),
            );
            if (frame.generate !== false) generated++;
          }
          ws.close();
          expect(turn).toBe(call.responseIds.length);
          // Every generated turn is metered; a warm-up is not.
          let rows: Record<string, any>[] = [];
          for (let n = 0; n < 200 && rows.length < generated; n++) {
            rows = await usage(own.id);
            if (rows.length < generated) await Bun.sleep(25);
          }
          expect(rows.map((r) => ({ status: r.status, model: r.model, counted: r.input_tokens > 0 }))).toEqual(
            Array.from({ length: generated }, () => ({ status: 200, model, counted: true })),
          );
        });
      }
    });

    test("every replayed call is in the ledger, answered 200 and counted", async () => {
      const rows = await ledgered(replayed);
      for (const id of replayed) {
        const row = rows.get(id);
        expect({ id, status: row?.status, counted: (row?.input_tokens ?? 0) > 0 }).toEqual({
          id,
          status: 200,
          counted: true,
        });
      }
    });
  });
}
