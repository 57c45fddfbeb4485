import { describe, expect, test } from "bun:test";
import { APIPromise, apiResult } from "./api-promise.js";

const response = () => new Response(null, { headers: { "x-request-id": "req_p" } });

describe("APIPromise", () => {
  test("awaits to the body and works with Promise combinators", async () => {
    const p = new APIPromise(Promise.resolve(apiResult({ n: 1 }, response())));
    expect(await p).toEqual({ n: 1 });
    expect(await Promise.all([p, p])).toEqual([{ n: 1 }, { n: 1 }]);
    expect(p).toBeInstanceOf(Promise);
    expect(p.then((v) => v.n)).not.toBeInstanceOf(APIPromise);
  });

  test("withResponse adds the response and request id", async () => {
    const { data, requestId } = await new APIPromise(Promise.resolve(apiResult("x", response()))).withResponse();
    expect([data, requestId]).toEqual(["x", "req_p"]);
  });

  test("a rejection reaches every consumer, and one nobody awaits does not crash the process", async () => {
    const failing = () => new APIPromise<string>(Promise.reject(new Error("nope")));
    await expect(failing()).rejects.toThrow("nope");
    await expect(failing().withResponse()).rejects.toThrow("nope");
    expect(await failing().catch((e: Error) => e.message)).toBe("nope");
    failing(); // never awaited: marked handled, so no unhandled-rejection error fails this test run
    await new Promise((r) => setTimeout(r, 5));
  });
});
