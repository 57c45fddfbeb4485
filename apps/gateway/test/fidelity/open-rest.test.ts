/**
 * Read set and open rest (docs/protocols.md): what Turnpike does not interpret — unknown fields,
 * newer values of known fields, content types it has never seen, beta names — reaches an upstream
 * of the client's own protocol byte for byte, and toward another protocol an unknown knob is
 * dropped with a warning while unknown content is a 400 naming it. For each client format.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { ALPHA, BETA, EPSILON, RESPONSES_VENDOR_ENV } from "../conformance/upstreams";

/** The text of every upstream request body and its headers, as the gateway sent them. */
const sent: { url: string; text: string; headers: Headers }[] = [];
const recording: typeof fetch = Object.assign(
  (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    if (typeof init?.body === "string")
      sent.push({ url: String(input), text: init.body, headers: new Headers(init.headers) });
    return fetch(input, init);
  },
  { preconnect: fetch.preconnect },
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness(RESPONSES_VENDOR_ENV, { fetch: recording });
});
afterAll(async () => {
  await h.close();
});

/** A body as a client might write it: indented, a float written `1.0`, an escaped character. */
function clientText(model: string, fields: string): string {
  return `{\n  "model" : "${model}",\n  "future_knob": {"depth": [1.0, 2e0, "caf\\u00e9"]},\n${fields}\n}\n`;
}

async function postText(path: string, text: string, headers: Record<string, string> = {}): Promise<Response> {
  sent.length = 0;
  return h.call(path, {
    method: "POST",
    body: text,
    headers,
    dialect: path === "/v1/messages" ? "messages" : undefined,
  });
}

const lastText = () => sent.at(-1)?.text;
const warnings = (res: Response) => res.headers.get("x-turnpike-warning") ?? "";

describe("passthrough: the upstream receives the client's bytes", () => {
  test('messages → messages: unknown field, thinking.display "updates", an unknown block type and an unknown beta', async () => {
    const text = clientText(
      ALPHA.model,
      // A breakpoint of the client's own: Turnpike places none of its own (docs/protocols.md §1.6).
      `  "max_tokens": 64, "cache_control": {"type": "ephemeral", "ttl": "5m"},\n  "thinking": {"type": "adaptive", "display": "updates"},\n  "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "future_block", "payload": {"x": 1}}]}]`,
    );
    const res = await postText("/v1/messages", text, {
      "anthropic-beta": "future-beta-2031-01-01,fine-grained-tool-streaming-2025-05-14",
    });
    expect(res.status).toBe(200);
    expect(lastText()).toBe(text);
    expect(sent.at(-1)!.headers.get("anthropic-beta")).toBe(
      "future-beta-2031-01-01,fine-grained-tool-streaming-2025-05-14",
    );
    expect(warnings(res)).toBe("");
  });

  test("chat → chat: unknown field, a newer reasoning_effort and service_tier, an unknown content part", async () => {
    const text = clientText(
      BETA.model,
      `  "reasoning_effort": "ultra", "service_tier": "future-tier",\n  "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "future_part", "ref": "r1"}]}]`,
    );
    const res = await postText("/v1/chat/completions", text);
    expect(res.status).toBe(200);
    expect(lastText()).toBe(text);
  });

  test("Responses → Responses: unknown field, a newer reasoning effort, an unknown item and part type", async () => {
    const text = clientText(
      EPSILON.model,
      `  "reasoning": {"effort": "ultra"},\n  "input": [{"type": "future_item", "id": "fi_1"}, {"role": "user", "content": [{"type": "input_text", "text": "Hi"}, {"type": "future_part", "ref": 2}]}]`,
    );
    const res = await postText("/v1/responses", text);
    expect(res.status).toBe(200);
    expect(lastText()).toBe(text);
  });

  test("a field Turnpike rewrites (a cap above the model's, lowered) is the only change; the rest as sent", async () => {
    // An output cap above the model's is lowered: that field is written anew, every other kept.
    const text = clientText(
      ALPHA.model,
      `  "max_tokens": 9999999, "cache_control": {"type": "ephemeral"},\n  "messages": [{"role": "user", "content": "Hi"}]`,
    );
    const res = await postText("/v1/messages", text);
    expect(res.status).toBe(200);
    const got = lastText()!;
    expect(got).not.toBe(text);
    expect(got.replace(/"max_tokens": \d+/, '"max_tokens": 9999999')).toBe(text);
    expect(warnings(res)).toContain("max_tokens");
  });
});

describe("translation: an unknown knob is dropped with a warning, unknown content is a 400 naming it", () => {
  test('messages → chat: thinking.display "updates" and effort "extreme" are dropped and named; the call succeeds', async () => {
    const text = JSON.stringify({
      model: BETA.model,
      max_tokens: 64,
      thinking: { type: "adaptive", display: "updates" },
      output_config: { effort: "extreme" },
      messages: [{ role: "user", content: "Hi" }],
    });
    const res = await postText("/v1/messages", text);
    expect(res.status).toBe(200);
    expect(warnings(res)).toContain("thinking.display");
    expect(warnings(res)).toContain("output_config.effort");
    const upstream = JSON.parse(lastText()!) as Record<string, unknown>;
    expect(JSON.stringify(upstream)).not.toContain("updates");
    expect(JSON.stringify(upstream)).not.toContain("extreme");
  });

  test("messages → chat and → Responses: the client's beta names are not sent, and named in the warning", async () => {
    const betas = "claude-code-20250219,future-beta-2031-01-01";
    for (const model of [BETA.model, EPSILON.model]) {
      const res = await postText(
        "/v1/messages",
        JSON.stringify({ model, max_tokens: 64, messages: [{ role: "user", content: "Hi" }] }),
        { "anthropic-beta": betas },
      );
      expect(res.status).toBe(200);
      expect(warnings(res)).toContain(`anthropic-beta: ${betas} is read only by messages upstreams`);
      expect(sent.at(-1)!.headers.get("anthropic-beta")).toBeNull();
      expect(sent.at(-1)!.text).not.toContain("future-beta");
    }
  });

  test("chat → messages: the client's beta names reach the messages upstream, with no warning about them", async () => {
    const res = await postText(
      "/v1/chat/completions",
      JSON.stringify({ model: ALPHA.model, messages: [{ role: "user", content: "Hi" }] }),
      { "anthropic-beta": "future-beta-2031-01-01" },
    );
    expect(res.status).toBe(200);
    expect(warnings(res)).not.toContain("anthropic-beta");
    expect(sent.at(-1)!.headers.get("anthropic-beta")).toContain("future-beta-2031-01-01");
  });

  test("messages → chat: an unknown block type is a 400 naming where it is", async () => {
    const text = JSON.stringify({
      model: BETA.model,
      max_tokens: 64,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }, { type: "future_block" }] }],
    });
    const res = await postText("/v1/messages", text);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toStartWith(
      'messages[0].content[1].type: the content block type "future_block" is not one Turnpike can translate for chat upstreams',
    );
    expect(sent).toHaveLength(0);
  });

  test("chat → messages: a newer reasoning_effort is dropped and named; an unknown part is a 400", async () => {
    const ok = await postText(
      "/v1/chat/completions",
      JSON.stringify({ model: ALPHA.model, reasoning_effort: "ultra", messages: [{ role: "user", content: "Hi" }] }),
    );
    expect(ok.status).toBe(200);
    expect(warnings(ok)).toContain("reasoning_effort");
    const bad = await postText(
      "/v1/chat/completions",
      JSON.stringify({
        model: ALPHA.model,
        messages: [{ role: "user", content: [{ type: "future_part", ref: "r" }] }],
      }),
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string; param: string } }).error).toMatchObject({
      param: "messages[0].content[0].type",
      message: expect.stringContaining(
        'the content part type "future_part" is not one Turnpike can translate for messages upstreams',
      ),
    });
  });

  test("Responses → messages: a newer reasoning effort is dropped and named; an unknown content part is a 400", async () => {
    const ok = await postText(
      "/v1/responses",
      JSON.stringify({ model: ALPHA.model, reasoning: { effort: "ultra" }, input: "Hi" }),
    );
    expect(ok.status).toBe(200);
    expect(warnings(ok)).toContain("reasoning.effort");
    const input = [
      {
        role: "user",
        content: [
          { type: "input_text", text: "Hi" },
          { type: "future_part", ref: 2 },
        ],
      },
    ];
    const bad = await postText("/v1/responses", JSON.stringify({ model: ALPHA.model, input }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain(
      'input[0].content[1].type: the content part type "future_part" is not one Turnpike can translate',
    );
  });
});
