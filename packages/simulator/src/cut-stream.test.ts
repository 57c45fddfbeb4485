import { describe, expect, test } from "bun:test";
import { AUTH, PATH, events, payloads, sim } from "./test-support";

const ask = "Tell me about gateways [sim chunks=8]";

async function fault(s: ReturnType<typeof sim>, body: Record<string, unknown>): Promise<void> {
  const res = await s.post("/_sim/faults", { key: "test-key", times: 1, ...body });
  expect(res.status).toBe(200);
}

const textOf = (evs: { data: string }[]) =>
  evs
    .map((e) => JSON.parse(e.data))
    .filter((d) => d.type === "content_block_delta" && d.delta.type === "text_delta")
    .map((d) => d.delta.text)
    .join("");

describe("the cut_after fault: a stream cut after N deltas, once", () => {
  test("messages: kept deltas, then the in-band error; the next request is whole", async () => {
    const s = sim();
    const body = { model: "a", max_tokens: 500, stream: true, messages: [{ role: "user", content: ask }] };
    const whole = await events(await s.post(PATH.messages, body, AUTH.messages));
    await fault(s, { cut_after: 3, cut: "error" });
    const cut = await events(await s.post(PATH.messages, body, AUTH.messages));
    expect(cut.filter((e) => e.event === "content_block_delta")).toHaveLength(3);
    expect(cut.at(-1)!.event).toBe("error");
    expect(cut.some((e) => e.event === "message_stop")).toBe(false);
    expect(textOf(whole).startsWith(textOf(cut))).toBe(true);
    const again = await events(await s.post(PATH.messages, body, AUTH.messages));
    expect(textOf(again)).toBe(textOf(whole));
  });

  test("truncate ends the body with no terminal event; a wrong kind is refused", async () => {
    const s = sim();
    await fault(s, { cut_after: 2, cut: "truncate" });
    const all = await payloads(
      await s.post(PATH.chat, { model: "b", stream: true, messages: [{ role: "user", content: ask }] }, AUTH.chat),
    );
    expect(all.includes("[DONE]")).toBe(false);
    expect(all.filter((c) => c.choices?.[0]?.delta?.content)).toHaveLength(2);
    const bad = await s.post("/_sim/faults", { key: "test-key", cut: "explode" });
    expect(bad.status).toBe(400);
  });
});

describe("a continuation request: the rest of the same reply", () => {
  test("messages prefill: the text after the partial, no thinking", async () => {
    const s = sim();
    const body = { model: "a", max_tokens: 500, stream: true, messages: [{ role: "user", content: ask }] };
    const whole = textOf(await events(await s.post(PATH.messages, body, AUTH.messages)));
    const partial = whole.slice(0, whole.indexOf(" ", 30));
    const rest = await events(
      await s.post(
        PATH.messages,
        { ...body, messages: [...body.messages, { role: "assistant", content: partial }] },
        AUTH.messages,
      ),
    );
    expect(partial + textOf(rest)).toBe(whole);
  });

  test("chat, asked in words: the rest, restarting at the partial's last three words", async () => {
    const s = sim();
    const body = { model: "b", stream: false, messages: [{ role: "user", content: ask }] };
    const whole = (await (await s.post(PATH.chat, body, AUTH.chat)).json()).choices[0].message.content as string;
    const partial = whole.slice(0, whole.indexOf(" ", 30));
    const res = await s.post(
      PATH.chat,
      {
        ...body,
        messages: [
          ...body.messages,
          { role: "assistant", content: partial },
          { role: "user", content: "Your previous reply was cut off. Continue it." },
        ],
      },
      AUTH.chat,
    );
    const rest = (await res.json()).choices[0].message.content as string;
    const words = partial.split(" ");
    expect(rest.startsWith(words.slice(-3).join(" "))).toBe(true);
    expect(whole.endsWith(rest)).toBe(true);
  });
});
