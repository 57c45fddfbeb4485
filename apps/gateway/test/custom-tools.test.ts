/**
 * Custom (free-form) tools of the Responses format — a coding agent's patch tool is one — on every
 * upstream protocol, JSON and stream, through the official `openai` client: passed through as
 * they are to a Responses upstream; elsewhere offered as a function tool of one string argument
 * and mapped back to a `custom_tool_call` (with `response.custom_tool_call_input.*` events), its
 * `custom_tool_call_output` carried on the next turn.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ADMIN_KEY, readSSE, startHarness, type Harness } from "./harness";
import { ALPHA, BETA, DELTA, EPSILON, GAMMA, RESPONSES_VENDOR_ENV } from "./conformance/upstreams";
import { SpecWatch } from "./support/open-responses";

let h: Harness;
let openai: OpenAI;
// Every reply and snapshot, custom_tool_call items included, is held to the Open Responses schema.
const spec = new SpecWatch();
beforeAll(async () => {
  h = await startHarness(RESPONSES_VENDOR_ENV);
  openai = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0, fetch: spec.fetch });
});
afterEach(async () => {
  await spec.settle();
  expect(spec.problems).toEqual([]);
});
afterAll(async () => {
  await h.close();
  expect(spec.checked).toBeGreaterThan(0);
});

const GRAMMAR =
  'start: begin_patch hunk end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\nhunk: /(.|\\n)+/\n%import common.LF';
const PATCH_TOOL: OpenAI.Responses.CustomTool = {
  type: "custom",
  name: "apply_patch",
  description: "Use the `apply_patch` tool to edit files.",
  format: { type: "grammar", syntax: "lark", definition: GRAMMAR },
};
const SHELL_TOOL: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "shell",
  description: "Run a command",
  parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  strict: false,
};
const TOOLS = [PATCH_TOOL, SHELL_TOOL];

const lastUpstreamBody = () => JSON.stringify(h.gw.simulator!.requests.at(-1)!.body);

async function ledgerRow(requestId: string): Promise<Record<string, unknown> | undefined> {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=10000`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const row = ((await res.json()) as { data: Record<string, unknown>[] }).data.find(
      (r) => r.request_id === requestId,
    );
    if (row) return row;
    await Bun.sleep(20);
  }
  return undefined;
}

describe("custom (free-form) tools", () => {
  for (const up of [ALPHA, BETA, GAMMA, DELTA, EPSILON]) {
    test(`offered, called and answered on a ${up.label} upstream (${up.model}), JSON and stream`, async () => {
      // JSON: the call comes back as a custom_tool_call whose input is plain text.
      const raw = await openai.responses
        .create({ model: up.model, store: false, tools: TOOLS, input: "Fix the typo in README.md [sim tools=1]" })
        .withResponse();
      const json = raw.data;
      const call = json.output.find((i) => i.type === "custom_tool_call") as OpenAI.Responses.ResponseCustomToolCall;
      expect(call).toBeDefined();
      expect(call.name).toBe("apply_patch");
      expect(typeof call.input).toBe("string");
      expect(call.input.length).toBeGreaterThan(0);
      // The plain text the model wrote (the simulator writes a patch for a tool of this name), not JSON.
      expect(call.input).toStartWith("*** Begin Patch\n*** Add File: README.sim.md\n");
      expect(json.output.some((i) => i.type === "function_call")).toBe(false);
      const sent = JSON.parse(lastUpstreamBody()) as Record<string, any>;
      if (up.protocol === "responses") {
        // Passed through: the vendor gets the custom tool as the client wrote it.
        expect(sent.tools[0]).toEqual(PATCH_TOOL);
      } else {
        // Translated: a function tool of one string argument, the grammar in its description.
        const text = JSON.stringify(sent);
        expect(text).toContain("apply_patch");
        expect(text).toContain("*** Begin Patch");
        expect(text).not.toContain('"custom"');
      }
      expect(raw.response.headers.get("x-turnpike-warning") ?? "").not.toContain("apply_patch");
      const row = await ledgerRow(raw.response.headers.get("x-request-id")!);
      expect(row?.status).toBe(200);
      expect(Number(row?.output_tokens)).toBeGreaterThan(0);

      // Stream: the input arrives in custom_tool_call_input events that add up to the item's input.
      const res = await h.call("/v1/responses", {
        method: "POST",
        body: JSON.stringify({
          model: up.model,
          store: false,
          stream: true,
          tools: TOOLS,
          input: "Fix the typo in README.md [sim tools=1]",
        }),
      });
      expect(res.status).toBe(200);
      const frames = (await readSSE(res)).map((f) => JSON.parse(f.data) as Record<string, any>);
      const deltas = frames
        .filter((f) => f.type === "response.custom_tool_call_input.delta")
        .map((f) => f.delta as string);
      const done = frames.find((f) => f.type === "response.custom_tool_call_input.done");
      const itemDone = frames.find((f) => f.type === "response.output_item.done" && f.item.type === "custom_tool_call");
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.join("")).toBe(done!.input);
      expect(itemDone!.item).toMatchObject({
        type: "custom_tool_call",
        name: "apply_patch",
        input: done!.input,
        status: "completed",
      });
      expect(frames.at(-1)!.type).toBe("response.completed");
      expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
      // The official stream helper rebuilds the same final response.
      const final = await openai.responses
        .stream({ model: up.model, store: false, tools: TOOLS, input: "Fix the typo in README.md [sim tools=1]" })
        .finalResponse();
      expect(final.output.find((i) => i.type === "custom_tool_call")).toMatchObject({ name: "apply_patch" });

      // The next turn replays the call and its output; the model answers.
      const next = await openai.responses.create({
        model: up.model,
        store: false,
        tools: TOOLS,
        input: [
          { role: "user", content: "Fix the typo in README.md" },
          {
            type: "custom_tool_call",
            call_id: call.call_id,
            name: "apply_patch",
            input: "*** Begin Patch\n*** Update File: README.md\n-teh\n+the\n*** End Patch\n",
          },
          { type: "custom_tool_call_output", call_id: call.call_id, output: 'Done. [sim text="Patched."]' },
        ],
      });
      expect(next.output_text).toBe("Patched.");
      const replayed = lastUpstreamBody();
      expect(replayed).toContain("Update File: README.md");
      expect(replayed).toContain("Done.");
      if (up.protocol === "responses") expect(replayed).toContain('"custom_tool_call_output"');
    }, 20_000);
  }

  test("a stored reply's custom tool call is replayed on previous_response_id", async () => {
    const first = await openai.responses.create({ model: BETA.model, tools: TOOLS, input: "Fix it [sim tools=1]" });
    const call = first.output.find((i) => i.type === "custom_tool_call") as OpenAI.Responses.ResponseCustomToolCall;
    const next = await openai.responses.create({
      model: BETA.model,
      tools: TOOLS,
      previous_response_id: first.id,
      input: [{ type: "custom_tool_call_output", call_id: call.call_id, output: 'ok [sim text="Done."]' }],
    });
    expect(next.output_text).toBe("Done.");
    const sent = JSON.parse(lastUpstreamBody()) as {
      messages: { role: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
    };
    const replayed = sent.messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.id === call.call_id);
    expect(replayed?.function.name).toBe("apply_patch");
    expect(JSON.parse(replayed!.function.arguments)).toEqual({ input: call.input });
  });
});
