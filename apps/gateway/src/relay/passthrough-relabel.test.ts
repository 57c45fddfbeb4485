/**
 * The passthrough tap puts the catalog id into every frame of a same-protocol stream whose vendor
 * answers with its own snapshot name, as text: frames stay on the scanner path (never parsed for
 * it), and a vendor that names the catalog id itself gets its bytes relayed untouched.
 */
import { describe, expect, test } from "bun:test";
import { FORMATS } from "../formats";
import { PROTOCOLS } from "../protocols";
import { passthroughTap } from "./passthrough-tap";
import { UsageTally } from "../metering/usage-tally";

/** Runs the tap over chunks split at the given byte offsets; returns the pieces it wrote. */
function run(
  dialect: "messages" | "chat",
  text: string,
  cuts: number[],
  includeUsage: boolean,
  id: string,
): { pieces: (Uint8Array | string)[]; out: string; tally: UsageTally } {
  const bytes = new TextEncoder().encode(text);
  const tally = new UsageTally();
  const tap = passthroughTap(PROTOCOLS[dialect].passthrough, FORMATS[dialect], tally, {
    includeUsage,
    renameModel: id,
  });
  const pieces: (Uint8Array | string)[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    tap.push(bytes.slice(at, cut), (p) => pieces.push(p));
    at = cut;
  }
  tap.end((p) => pieces.push(p));
  const out = pieces.map((p) => (typeof p === "string" ? p : new TextDecoder().decode(p))).join("");
  return { pieces, out, tally };
}

const messagesStream = (model: string) =>
  [
    `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"${model}","content":[],"stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}\n\n`,
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}\n\n',
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  ].join("");

describe("the catalog id in every frame of a passthrough stream", () => {
  test("messages: a dated snapshot name is replaced, whatever the chunk boundaries; usage is still read", () => {
    const vendor = messagesStream("alpha-sonnet-4-6-20250929");
    for (const cuts of [[], [30], [60, 61, 200, 350], [vendor.length - 3]]) {
      const { out, tally } = run("messages", vendor, cuts, false, "alpha-sonnet-4-6");
      expect(out).toBe(messagesStream("alpha-sonnet-4-6"));
      expect(tally.usage.input_tokens).toBe(12);
      expect(tally.usage.output_tokens).toBe(5);
    }
  });

  test("messages: a vendor that names the catalog id gets its bytes relayed as they came after the first frame", () => {
    const vendor = messagesStream("alpha-haiku-4-5");
    const { pieces, out } = run("messages", vendor, [400, 500, 600], false, "alpha-haiku-4-5");
    expect(out).toBe(vendor);
    // A first read that holds the whole reply goes out as the same bytes, not re-encoded.
    const whole = run("messages", vendor, [], false, "alpha-haiku-4-5");
    expect(whole.out).toBe(vendor);
    expect(whole.pieces[0]).toBeInstanceOf(Uint8Array);
    // The first frame is held to learn the name; later chunks go out as the upstream's own bytes.
    expect(pieces.slice(1).some((p) => p instanceof Uint8Array)).toBe(true);
  });

  test("messages: once the snapshot name is known, later chunks go out as the upstream's own bytes", () => {
    const vendor = messagesStream("alpha-sonnet-4-6-20250929");
    // Cut at line ends, as the line gate in front of the tap passes them.
    const first = vendor.indexOf("\n\n") + 2;
    const cuts = [first, vendor.indexOf("\n", first + 30) + 1, vendor.indexOf("\n\n", first + 200) + 1];
    const { pieces, out, tally } = run("messages", vendor, cuts, false, "alpha-sonnet-4-6");
    expect(out).toBe(messagesStream("alpha-sonnet-4-6"));
    expect(tally.usage.output_tokens).toBe(5);
    // The first frame (it names the model) is relabelled as text; nothing after it is re-encoded.
    expect(typeof pieces[0]).toBe("string");
    expect(pieces.slice(1, 4).every((p) => p instanceof Uint8Array)).toBe(true);
  });

  test("a chunk cut anywhere, even inside a later frame's model name, is relabelled whole", () => {
    const c = (body: object) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "beta-5-2025-08-07", ...body })}\n\n`;
    const vendor =
      c({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }) +
      c({ choices: [{ index: 0, delta: { content: "Hé" }, finish_reason: null }] }) +
      c({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
      c({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }) +
      "data: [DONE]\n\n";
    const bytes = new TextEncoder().encode(vendor).length;
    const first = vendor.indexOf("\n\n") + 2;
    for (let cut = first + 1; cut < bytes; cut += 3) {
      const { out, tally } = run("chat", vendor, [first, cut], true, "beta-5");
      expect(out).toBe(vendor.replaceAll("beta-5-2025-08-07", "beta-5"));
      expect(tally.usage.output_tokens).toBe(2);
    }
    // One cut anywhere: the first frame and a piece of the next in one read, the rest in another.
    for (let cut = 1; cut < bytes; cut += 2) {
      const { out, tally } = run("chat", vendor, [cut], true, "beta-5");
      expect(out).toBe(vendor.replaceAll("beta-5-2025-08-07", "beta-5"));
      expect(tally.usage.output_tokens).toBe(2);
    }
  });

  test("chat: every chunk names the catalog id; the usage chunk the client did not ask for is still dropped", () => {
    const c = (body: object) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "beta-5-2025-08-07", ...body })}\n\n`;
    const vendor =
      c({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }) +
      c({ choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] }) +
      c({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
      c({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }) +
      "data: [DONE]\n\n";
    for (const includeUsage of [true, false]) {
      const { out, tally } = run("chat", vendor, [50], includeUsage, "beta-5");
      expect(out).not.toContain("2025-08-07");
      expect(out.match(/"model":"beta-5"/g)?.length).toBe(includeUsage ? 4 : 3);
      expect(tally.usage.output_tokens).toBe(2);
      expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
    }
  });
});
