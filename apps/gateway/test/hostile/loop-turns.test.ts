import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { messagesLines, openaiLines } from "../../src/batches/batch-input";
import { BatchStore } from "../../src/storage/batch-store";
import { sqliteRunner } from "../../src/storage/sql-runner";
import { migrateSqlite } from "../../src/storage/migrations";
import { loadConfig } from "../../src/config/config";
import { LARGE_BODY_CHARS, loopTurns } from "../../src/vocabulary/loop-turns";
import { Database } from "bun:sqlite";
import { type Harness, startHarness } from "../harness";
import { countPromptTokens } from "@turnpike/simulator";

// Issue 27, item 1: no request may hold the event loop for more than about 100 ms. A body within
// TURNPIKE_MAX_BODY_VALUES still costs its pipeline's steps (parse and check, translation, the
// count, the upstream body), each linear in its values; a batch's thousands of lines cost their
// parsing and storing. These tests assert the work is cut, with turns of the loop between the
// pieces — not how long a piece takes (scripts/event-loop-hold.ts measures that).

/** Turns of the event loop that ran while `work` was under way, counted by an immediate that re-arms itself. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; value: T }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  done = true;
  return { turns, value };
}

const limits = loadConfig({ TURNPIKE_ADMIN_KEY: "x".repeat(40) }).batches;

describe("a batch's lines are read in slices", () => {
  test("a chat-family input file of 30,000 lines: parsed with turns of the loop between slices, every line kept", async () => {
    const line = (i: number) =>
      JSON.stringify({
        custom_id: `r${i}`,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "beta-5", messages: [{ role: "user", content: `hi ${i}` }] },
      });
    const content = Array.from({ length: 30_000 }, (_, i) => line(i)).join("\n");
    // Nothing in the parsing waits for I/O: the loop turns only if the work gives it turns.
    const { turns, value } = await turnsDuring(() =>
      openaiLines([Buffer.from(content)], "/v1/chat/completions", limits),
    );
    expect(turns).toBeGreaterThan(0);
    expect(value).toHaveLength(30_000);
    expect(value.at(-1)).toMatchObject({ n: 30_000, custom_id: "r29999", state: "pending", failed: false });
  });

  test("a messages batch of 30,000 requests: the same", async () => {
    const requests = Array.from({ length: 30_000 }, (_, i) => ({
      custom_id: `r${i}`,
      params: { model: "alpha-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: `hi ${i}` }] },
    }));
    const { turns, value } = await turnsDuring(() => messagesLines({ requests }, limits));
    expect(turns).toBeGreaterThan(0);
    expect(value).toHaveLength(30_000);
  });

  test("a job's lines are stored a page per transaction, the loop given a turn between pages; counts need no line", async () => {
    const db = new Database(":memory:");
    migrateSqlite(db);
    const store = new BatchStore(sqliteRunner(db));
    const lines = Array.from({ length: 1000 }, (_, i) => ({
      n: i + 1,
      custom_id: `r${i}`,
      request: JSON.stringify({ url: "/v1/chat/completions", body: { model: "beta-5" } }),
      state: "pending" as const,
      result: null,
      failed: false,
    }));
    let between = 0;
    const job = {
      id: "batch_t",
      key_id: "k",
      kind: "openai" as const,
      state: "active" as const,
      object: {},
      created_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    };
    await store.createJob(job, lines, async () => {
      between++;
    });
    expect(between).toBe(5); // 1,000 lines, 200 a page
    expect(await store.lineCounts(job.id)).toEqual({
      total: 1000,
      succeeded: 0,
      failed: 0,
      pending: 1000,
      cancelled: 0,
      expired: 0,
    });
    let read = 0;
    for await (const l of store.eachLine(job.id)) expect(l.n).toBe(++read);
    expect(read).toBe(1000);
    // The count reads the index alone.
    const plan = db
      .query<{ detail: string }, [string]>(
        "EXPLAIN QUERY PLAN SELECT state, failed, COUNT(*) AS n FROM batch_lines WHERE batch_id = ? GROUP BY state, failed",
      )
      .all(job.id);
    expect(plan.map((p) => p.detail).join(" ")).toContain("COVERING INDEX batch_lines_by_state");
  });
});

describe("a large body's pipeline", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const chat = (turns: number) =>
    JSON.stringify({
      model: "beta-5",
      messages: Array.from({ length: turns }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: `turn ${i} hi`,
      })),
    });

  test("gives the loop a turn between its steps; a small body goes straight through", async () => {
    const send = async (body: string) => {
      const before = loopTurns.given;
      const res = await fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
        body,
      });
      await res.arrayBuffer();
      return { status: res.status, turns: loopTurns.given - before };
    };
    const large = chat(12_000); // 36,000 values, within the default limit
    expect(large.length).toBeGreaterThan(LARGE_BODY_CHARS);
    const big = await send(large);
    expect(big.status).toBe(200);
    // Parse | check | recall, admit and plan (a passthrough: chat to a chat upstream) | the upstream
    // body. Over beta-5's window, but with no fallback: not counted (the next test).
    expect(big.turns).toBe(3);
    const small = await send(chat(4));
    expect(small).toEqual({ status: 200, turns: 0 });
  });

  test("a prompt longer than the model's window, with no fallback to take it, is sent without Turnpike counting it", async () => {
    // A passthrough counts by translating the whole body to the pivot first: work that could
    // change nothing when the model has no fallback (beta-5 has none by default).
    const counted: number[] = [];
    const count = h.gw.deps.countPrompt;
    h.gw.deps.countPrompt = (request) => {
      const n = count(request);
      counted.push(n);
      return n;
    };
    try {
      const large = chat(12_000);
      expect(large.length).toBeGreaterThan(h.gw.deps.catalog.get("beta-5")!.context_window);
      const res = await fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
        body: large,
      });
      expect(res.status).toBe(200);
      // The upstream's own count is the one reported.
      const { usage } = (await res.json()) as { usage: { prompt_tokens: number } };
      expect(usage.prompt_tokens).toBe(countPromptTokens("chat", JSON.parse(large)));
      expect(counted).toEqual([]);
    } finally {
      h.gw.deps.countPrompt = count;
    }
  });
});
