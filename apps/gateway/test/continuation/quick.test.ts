import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { RESPONSES_VENDOR_ENV } from "../conformance/upstreams";
import { bodyOf, stream } from "./cells";

let h: Harness;
beforeAll(async () => {
  h = await startHarness(RESPONSES_VENDOR_ENV);
});
afterAll(() => h.close());

test("messages over messages, reset after 3 text deltas", async () => {
  const body = bodyOf("messages", "alpha-haiku-4-5", "Tell me about gateways [sim chunks=8]");
  const whole = await stream(h, "messages", body, "alpha-haiku-4-5");
  h.gw.simulator!.fault("simulator-alpha", { cut_after: 3, cut: "reset", times: 1 });
  const cut = await stream(h, "messages", body, "alpha-haiku-4-5");
  console.log(cut.frames.map((f) => f.data).join("\n"));
  expect(cut.error).toBeUndefined();
  expect(cut.outcome.text).toBe(whole.outcome.text);
});
