/**
 * What a Codex-style coding agent sends on every call, recorded from the agent's own CLI (0.169,
 * `wire_api = "responses"`) pointed at Turnpike, with its prompts and tool descriptions replaced
 * by placeholders: `stream`, `store: false`, `include`, `reasoning.summary`, `prompt_cache_key`,
 * `client_metadata`, developer and user messages of `input_text` parts, function tools, a
 * `namespace` tool and the built-in `web_search`. Replayed against every catalog model, streamed
 * as recorded and as JSON: the first call, then the turn that carries a command's output.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import recorded from "./__fixtures__/codex-cli-requests.json";
import { CATALOG_IDS, startHarness, type Harness } from "./harness";
import { EPSILON, RESPONSES_VENDOR_ENV } from "./conformance/upstreams";

let h: Harness;
beforeAll(async () => {
  // With a vendor that speaks the Responses API beside the catalog's own.
  h = await startHarness(RESPONSES_VENDOR_ENV);
});
afterAll(async () => {
  await h.close();
});

type Body = Record<string, unknown> & { input: Record<string, unknown>[] };

/** The recorded body for `model`; the last user text steers the simulator. */
function body(kind: keyof typeof recorded, model: string, stream: boolean, directive: string): Body {
  const b = structuredClone(recorded[kind]) as Body;
  b.model = model;
  b.stream = stream;
  const last = b.input.at(-1)!;
  if (last.type === "message") (last.content as { text: string }[])[0]!.text += ` ${directive}`;
  else last.output = `${String(last.output)} ${directive}`;
  return b;
}

async function call(b: Body): Promise<{ status: number; response: Record<string, any>; warnings: string }> {
  const res = await h.call("/v1/responses", { method: "POST", body: JSON.stringify(b) });
  const warnings = res.headers.get("x-turnpike-warning") ?? "";
  if (!b.stream) return { status: res.status, response: (await res.json()) as Record<string, any>, warnings };
  const text = await res.text();
  const last = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]!) as Record<string, any>).at(-1)!;
  return { status: res.status, response: last.response ?? last, warnings };
}

for (const model of CATALOG_IDS) {
  describe(`Codex CLI's calls → ${model}`, () => {
    for (const stream of [true, false]) {
      test(`${stream ? "stream" : "JSON"}: a command call, then an answer after its output`, async () => {
        const first = await call(body("first_call", model, stream, "[sim tools=1]"));
        expect(first.status).toBe(200);
        expect(first.response.status).toBe("completed");
        const fn = first.response.output.find((i: { type: string }) => i.type === "function_call");
        expect(fn).toBeDefined();
        // The built-in tool is dropped with a warning, never a 400.
        expect(first.warnings).toContain('the built-in tool "web_search" cannot run on this upstream');
        // The namespace's functions were offered under their flat names.
        expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain("multi_agent_v1__");

        const second = await call(body("tool_result_turn", model, stream, '[sim text="Two files: a.txt and b.txt."]'));
        expect(second.status).toBe(200);
        expect(second.response.status).toBe("completed");
        const message = second.response.output.find((i: { type: string }) => i.type === "message");
        expect(message.content[0].text).toBe("Two files: a.txt and b.txt.");
        // The command's output reached the upstream, paired with its call.
        expect(JSON.stringify(h.gw.simulator!.requests.at(-1)!.body)).toContain("(the command's output)");
      });
    }
  });
}

describe(`Codex CLI's calls → a Responses vendor (${EPSILON.model}): passed through`, () => {
  for (const stream of [true, false]) {
    test(`${stream ? "stream" : "JSON"}: every field as recorded (the namespace and built-in tools too), no warnings`, async () => {
      const firstBody = body("first_call", EPSILON.model, stream, "[sim tools=1]");
      const first = await call(firstBody);
      expect(first.status).toBe(200);
      expect(first.warnings).toBe("");
      expect(h.gw.simulator!.requests.at(-1)!.body).toEqual(firstBody);
      expect(first.response.output.find((i: { type: string }) => i.type === "function_call")).toBeDefined();

      const secondBody = body("tool_result_turn", EPSILON.model, stream, '[sim text="Two files: a.txt and b.txt."]');
      const second = await call(secondBody);
      expect(second.status).toBe(200);
      expect(h.gw.simulator!.requests.at(-1)!.body).toEqual(secondBody);
      expect(second.response.output.find((i: { type: string }) => i.type === "message").content[0].text).toBe(
        "Two files: a.txt and b.txt.",
      );
    });
  }
});
