import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator } from "./start-simulator";
import type { Simulator } from "./simulator-options";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(() => sim.stop());

const ask = (key: string, signal?: AbortSignal) =>
  fetch(`${sim.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "alpha-haiku-4-5", max_tokens: 20, messages: [{ role: "user", content: "Hi" }] }),
    ...(signal ? { signal } : {}),
  });

describe("faults per credential", () => {
  test("a status fault answers the vendor's error with its retry-after, for that key only, `times` times", async () => {
    const set = await fetch(`${sim.url}/_sim/faults`, {
      method: "POST",
      body: JSON.stringify({ key: "k-a", status: 529, retry_after: 7, times: 1 }),
    });
    expect(set.status).toBe(200);
    const other = await ask("k-b");
    expect(other.status).toBe(200);
    const hit = await ask("k-a");
    expect(hit.status).toBe(529);
    expect(hit.headers.get("retry-after")).toBe("7");
    expect(((await hit.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
    expect((await ask("k-a")).status).toBe(200); // used up
  });

  test("reset drops the connection; hang answers nothing until the caller gives up", async () => {
    sim.fault("k-reset", { reset: true });
    await expect(ask("k-reset")).rejects.toThrow();
    sim.fault("k-hang", { hang: true });
    const ac = new AbortController();
    const pending = ask("k-hang", ac.signal);
    setTimeout(() => ac.abort(), 50);
    await expect(pending).rejects.toThrow();
    sim.clearFaults();
    expect((await ask("k-hang")).status).toBe(200);
  });

  test("a bad fault is refused naming the field", async () => {
    const res = await fetch(`${sim.url}/_sim/faults`, {
      method: "POST",
      body: JSON.stringify({ key: "k", status: "oops" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      "status: must be a non-negative number",
    );
  });
});
