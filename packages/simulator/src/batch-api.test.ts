import { afterAll, describe, expect, test } from "bun:test";
import { createSimulatorFetch } from "./create-simulator-fetch";
import { startSimulator } from "./start-simulator";
import { AUTH } from "./test-support";

describe("the vendors' batch APIs", async () => {
  const sim = await startSimulator({ port: 0, captureLimit: 0 });
  afterAll(() => sim.stop());
  const chat = (path: string, init: RequestInit = {}) =>
    fetch(`${sim.url}${path}`, { ...init, headers: { ...AUTH.chat, ...(init.headers ?? {}) } });
  const messages = (path: string, init: RequestInit = {}) =>
    fetch(`${sim.url}${path}`, {
      ...init,
      headers: { ...AUTH.messages, "content-type": "application/json", ...(init.headers ?? {}) },
    });
  const knobs = (body: unknown) => fetch(`${sim.url}/_sim/batches`, { method: "POST", body: JSON.stringify(body) });
  const reset = () => fetch(`${sim.url}/_sim/batches`, { method: "DELETE" });

  async function chatBatch(lines: unknown[]): Promise<any> {
    const form = new FormData();
    form.set("purpose", "batch");
    form.set("file", new File([lines.map((l) => JSON.stringify(l)).join("\n")], "in.jsonl"));
    const file = (await (await chat("/v1/files", { method: "POST", body: form })).json()) as any;
    expect(file).toMatchObject({ object: "file", purpose: "batch", filename: "in.jsonl" });
    const res = await chat("/v1/batches", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    });
    expect(res.status).toBe(200);
    return res.json();
  }
  const line = (id: string, text: string, model = "b") => ({
    custom_id: id,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model, messages: [{ role: "user", content: `Hi [sim text="${text}"]` }] },
  });
  const lines = async (fileId: string) =>
    (await (await chat(`/v1/files/${fileId}/content`)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));

  test("chat family: a file and a batch, answered as the same calls made directly; errors in the error file", async () => {
    const b = await chatBatch([line("one", "uno"), line("two", "dos"), line("bad", "x", "")]);
    expect(b).toMatchObject({ object: "batch", endpoint: "/v1/chat/completions" });
    const done = (await (await chat(`/v1/batches/${b.id}`)).json()) as any;
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const out = await lines(done.output_file_id);
    expect(out.map((o) => [o.custom_id, o.response.status_code, o.response.body.choices[0].message.content])).toEqual([
      ["one", 200, "uno"],
      ["two", 200, "dos"],
    ]);
    const direct = (await (
      await chat("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(line("one", "uno").body),
      })
    ).json()) as any;
    expect(out[0].response.body.usage).toEqual(direct.usage);
    const errs = await lines(done.error_file_id);
    expect(errs.map((e) => [e.custom_id, e.response.status_code])).toEqual([["bad", 400]]);
  });

  test("a slow batch runs until it is finished or cancelled; a failing one fails as a whole", async () => {
    await knobs({ ms: 600_000 });
    try {
      const slow = await chatBatch([line("s", "s")]);
      expect(((await (await chat(`/v1/batches/${slow.id}`)).json()) as any).status).toBe("in_progress");
      const cancelled = (await (await chat(`/v1/batches/${slow.id}/cancel`, { method: "POST" })).json()) as any;
      expect(cancelled.status).toBe("cancelled");
      expect((await lines(cancelled.error_file_id)).map((e) => e.error.code)).toEqual(["batch_cancelled"]);
      const other = await chatBatch([line("t", "t")]);
      await knobs({ finish: true });
      expect(((await (await chat(`/v1/batches/${other.id}`)).json()) as any).status).toBe("completed");
      await knobs({ ms: 0, fail: true });
      const failed = await chatBatch([line("f", "f")]);
      expect(((await (await chat(`/v1/batches/${failed.id}`)).json()) as any).status).toBe("failed");
    } finally {
      await reset();
    }
  });

  test("messages protocol: create, retrieve, results JSONL, cancel", async () => {
    const params = (text: string) => ({
      model: "a",
      max_tokens: 10,
      messages: [{ role: "user", content: `Hi [sim text="${text}"]` }],
    });
    const created = (await (
      await messages("/v1/messages/batches", {
        method: "POST",
        body: JSON.stringify({
          requests: [
            { custom_id: "x", params: params("ex") },
            { custom_id: "y", params: { model: "a", messages: [] } },
          ],
        }),
      })
    ).json()) as any;
    expect(created).toMatchObject({ type: "message_batch", processing_status: "ended" });
    expect(created.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    const results = (await (await fetch(created.results_url, { headers: AUTH.messages })).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(results[0]).toMatchObject({ custom_id: "x", result: { type: "succeeded", message: { type: "message" } } });
    expect(results[0].result.message.content[0].text).toBe("ex");
    expect(results[1]).toMatchObject({
      custom_id: "y",
      result: { type: "errored", error: { type: "error", error: { type: "invalid_request_error" } } },
    });
    await knobs({ ms: 600_000 });
    try {
      const slow = (await (
        await messages("/v1/messages/batches", {
          method: "POST",
          body: JSON.stringify({ requests: [{ custom_id: "z", params: params("z") }] }),
        })
      ).json()) as any;
      expect(slow.processing_status).toBe("in_progress");
      const c = (await (await messages(`/v1/messages/batches/${slow.id}/cancel`, { method: "POST" })).json()) as any;
      expect(c.processing_status).toBe("ended");
      expect(c.request_counts.canceled).toBe(1);
    } finally {
      await reset();
    }
  });

  test("generateContent batch mode: inline requests, the operation polled, inline responses; cancel", async () => {
    const gen = (path: string, init: RequestInit = {}) =>
      fetch(`${sim.url}${path}`, {
        ...init,
        headers: { ...AUTH.generate, "content-type": "application/json", ...(init.headers ?? {}) },
      });
    const request = (text: string) => ({ contents: [{ role: "user", parts: [{ text: `Hi [sim text="${text}"]` }] }] });
    const create = async () =>
      (await (
        await gen("/v1beta/models/g:batchGenerateContent", {
          method: "POST",
          body: JSON.stringify({
            batch: {
              displayName: "t",
              inputConfig: {
                requests: {
                  requests: [
                    { request: request("ein"), metadata: { key: "k1" } },
                    { request: { contents: [] }, metadata: { key: "k2" } },
                  ],
                },
              },
            },
          }),
        })
      ).json()) as any;
    const op = await create();
    expect(op.name).toMatch(/^batches\/[0-9a-f]+$/);
    const done = (await (await gen(`/v1beta/${op.name}`)).json()) as any;
    expect(done.done).toBe(true);
    expect(done.metadata.state).toBe("BATCH_STATE_SUCCEEDED");
    const rows = done.response.inlinedResponses.inlinedResponses;
    expect(rows[0].metadata.key).toBe("k1");
    expect(rows[0].response.candidates[0].content.parts[0].text).toBe("ein");
    expect(rows[1]).toMatchObject({ metadata: { key: "k2" }, error: { code: 3 } });
    await knobs({ ms: 600_000 });
    try {
      const slow = await create();
      expect(((await (await gen(`/v1beta/${slow.name}`)).json()) as any).metadata.state).toBe("BATCH_STATE_RUNNING");
      expect((await gen(`/v1beta/${slow.name}:cancel`, { method: "POST" })).status).toBe(200);
      const c = (await (await gen(`/v1beta/${slow.name}`)).json()) as any;
      expect([c.done, c.metadata.state]).toEqual([true, "BATCH_STATE_CANCELLED"]);
    } finally {
      await reset();
    }
  });

  test("batch calls check the vendor's key", async () => {
    const res = await fetch(`${sim.url}/v1/batches/batch_x`);
    expect(res.status).toBe(401);
  });
});

test("a streamed batch upload over the body limit is refused once the limit is passed, the rest never read", async () => {
  const sim = createSimulatorFetch({ captureLimit: 0 });
  const piece = new Uint8Array(256 * 1024).fill(0x61);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(out) {
      if (++pulled > 40) return out.close(); // 10 MiB in all
      out.enqueue(piece);
    },
  });
  const res = await sim("http://sim/v1/files", {
    method: "POST",
    headers: { ...AUTH.chat, "content-type": "multipart/form-data; boundary=x" },
    body,
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
    "Request body of over 1048576 bytes is larger than the simulator's limit of 1048576 bytes",
  );
  // The limit is 4 pieces; the fifth passes it (the stream may have one more queued).
  expect(pulled).toBeGreaterThanOrEqual(5);
  expect(pulled).toBeLessThanOrEqual(7);
});
