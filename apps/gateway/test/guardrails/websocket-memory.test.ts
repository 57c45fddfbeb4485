/**
 * The Responses WebSocket's memory of a socket's last replies (routes/responses-websocket.ts) is
 * kept as a stored response is (docs/guardrails.md, "Stored responses and the WebSocket's
 * memory"): the placeholders the upstream saw, never a value a policy took out. A turn continued
 * on the socket, whether the reply was stored or not and whether it was generated or only warmed,
 * sends the earlier turns as placeholders, and a placeholder of an earlier turn is never restored
 * to its value: the socket no longer holds it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHarness, type Harness } from "../harness";

const dir = mkdtempSync(join(tmpdir(), "turnpike-guardrail-socket-"));
const configFile = join(dir, "turnpike.json");
writeFileSync(
  configFile,
  JSON.stringify({
    guardrails: { default: ["pii"], policies: { pii: { detect: ["email"], action: "redact" } } },
  }),
);

const EMAIL = "dana.smith@example.com";
const OTHER = "li.wei@example.org";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TURNPIKE_CONFIG: configFile });
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

type Frame = Record<string, any>;

/** Opens a socket; `turn` sends one `response.create` and gives back its `response.completed`'s response. */
async function socket(): Promise<{ turn(frame: Frame): Promise<Frame>; close(): void }> {
  const options = { headers: { authorization: `Bearer ${h.key}` } } as unknown as string[]; // the runtime's handshake headers
  const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/responses`, options);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("the socket did not open")), { once: true });
  });
  return {
    turn(frame) {
      return new Promise((resolve, reject) => {
        const read = (e: MessageEvent) => {
          const f = JSON.parse(String(e.data)) as Frame;
          if (f.type === "response.completed") resolve(f.response);
          else if (f.type === "error" || f.type === "response.failed") reject(new Error(String(e.data)));
          else return;
          ws.removeEventListener("message", read);
        };
        ws.addEventListener("message", read);
        ws.send(JSON.stringify({ type: "response.create", model: "beta-5", ...frame }));
      });
    },
    close: () => ws.close(),
  };
}

const sentSince = (from: number) => JSON.stringify(h.gw.simulator!.requests.slice(from).map((r) => r.body));
const text = (response: Frame) => JSON.stringify(response.output);

describe("the Responses WebSocket's memory, with guardrails", () => {
  for (const store of [false, true])
    test(`a reply (store: ${store}) is continued on its socket as placeholders; an earlier one is not restored`, async () => {
      const s = await socket();
      const first = await s.turn({ store, input: `I am ${EMAIL}. [sim text="Noted, ${EMAIL}."]` });
      // The client sees its own value in the reply as it was answered.
      expect(text(first)).toContain(`Noted, ${EMAIL}.`);
      const before = h.gw.simulator!.requests.length;
      const next = await s.turn({
        store,
        previous_response_id: first.id,
        input: `Now write to ${OTHER}. [sim text="Done: ${OTHER}, not [EMAIL_1]."]`,
      });
      const sent = sentSince(before);
      expect(sent).not.toContain(EMAIL);
      expect(sent).not.toContain(OTHER);
      // The earlier turns as the upstream first saw them; the new value numbered past them.
      expect(sent).toContain("I am [EMAIL_1].");
      expect(sent).toContain("Noted, [EMAIL_1].");
      expect(sent).toContain("Now write to [EMAIL_2].");
      // This turn's own value comes back; the earlier one's placeholder stays one (its value is not held).
      expect(text(next)).toContain(`Done: ${OTHER}, not [EMAIL_1].`);
      s.close();
    });

  test("a warmed conversation (generate: false) is kept redacted too", async () => {
    const s = await socket();
    const warmed = await s.turn({ generate: false, input: `Context: the customer is ${EMAIL}.` });
    const before = h.gw.simulator!.requests.length;
    const next = await s.turn({
      previous_response_id: warmed.id,
      input: `Write to them. [sim text="Writing to [EMAIL_1]."]`,
    });
    const sent = sentSince(before);
    expect(sent).not.toContain(EMAIL);
    expect(sent).toContain("the customer is [EMAIL_1].");
    expect(text(next)).toContain("Writing to [EMAIL_1].");
    s.close();
  });
});
