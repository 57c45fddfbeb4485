/**
 * Vendors are data: a config file adds a vendor that speaks a known protocol, and a model served
 * by it, with no code change. Here the new vendor is a second simulator on its own port, reached
 * as a real (keyed, not simulated) upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "@turnpike/simulator";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/config";
import { startHarness, type Harness } from "./harness";

let acme: Simulator;
let h: Harness;
beforeAll(async () => {
  acme = await startSimulator({ port: 0, hostname: "127.0.0.1", captureLimit: 10 });
  const dir = mkdtempSync(join(tmpdir(), "turnpike-vendors-"));
  const file = join(dir, "turnpike.yaml");
  writeFileSync(
    file,
    [
      "vendors:",
      "  acme-eu:",
      "    protocol: chat",
      `    base_url: ${acme.url}/v1`,
      "models:",
      "  - id: acme-large",
      "    owned_by: acme-eu",
      "    upstream_model: acme-large-2026",
      "    input_per_mtok: 1",
      "    output_per_mtok: 2",
      "    context_window: 100000",
    ].join("\n"),
  );
  h = await startHarness({ TURNPIKE_CONFIG: file, ACME_EU_API_KEY: "acme-secret-1" });
});
afterAll(async () => {
  await h.close();
  await acme.stop();
});

describe("a vendor added by config", () => {
  test("serves its model through both client formats, with its own key and base URL", async () => {
    const chat = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({
        model: "acme-large",
        messages: [{ role: "user", content: 'Hello [sim text="from acme"]' }],
      }),
    });
    expect(chat.status).toBe(200);
    expect(chat.headers.get("x-turnpike-upstream")).toBe("acme-eu");
    const reply = (await chat.json()) as { model: string; choices: { message: { content: string } }[] };
    expect(reply.model).toBe("acme-large");
    expect(reply.choices[0]!.message.content).toBe("from acme");
    const sent = acme.requests.at(-1)!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe("Bearer acme-secret-1");
    expect((sent.body as { model: string }).model).toBe("acme-large-2026");

    // The messages format reaches it through the pivot.
    const msgs = await h.call("/v1/messages", {
      method: "POST",
      dialect: "messages",
      body: JSON.stringify({
        model: "acme-large",
        max_tokens: 50,
        messages: [{ role: "user", content: 'Hi [sim text="translated"]' }],
      }),
    });
    expect(msgs.status).toBe(200);
    const m = (await msgs.json()) as { model: string; content: { type: string; text: string }[] };
    expect(m.model).toBe("acme-large");
    expect(m.content[0]!.text).toBe("translated");
    // The simulator on the default port saw neither call.
    expect(h.gw.simulator!.requests.some((r) => JSON.stringify(r.body).includes("acme-large"))).toBe(false);
  });

  test("its usage is metered at the row's prices", async () => {
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "acme-large", messages: [{ role: "user", content: "Count me" }] }),
    });
    const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const rid = res.headers.get("x-request-id")!;
    await h.gw.deps.ledger.flush();
    const rows = await h.gw.deps.store.queryUsage({ key_id: h.keyId });
    const row = rows.find((r) => r.request_id === rid)!;
    expect(row.model).toBe("acme-large");
    expect(row.input_tokens).toBe(body.usage.prompt_tokens);
    expect(row.cost_usd).toBeCloseTo((body.usage.prompt_tokens * 1 + body.usage.completion_tokens * 2) / 1e6, 12);
  });
});

describe("bad vendor config is refused at start-up, naming the file and the field", () => {
  const write = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), "turnpike-vendors-")), "bad.yaml");
    writeFileSync(file, text);
    return file;
  };
  test("an unknown protocol", () => {
    const file = write("vendors:\n  acme:\n    protocol: soap\n");
    expect(() => loadConfig({ TURNPIKE_CONFIG: file })).toThrow(
      `${file}:3:5: vendors.acme.protocol: must be one of messages, chat, generate, responses, got "soap"`,
    );
  });
  test("a model naming a vendor that does not exist", async () => {
    const file = write(
      "models:\n  - id: x\n    owned_by: nobody\n    input_per_mtok: 1\n    output_per_mtok: 1\n    context_window: 1000\n",
    );
    await expect(startHarness({ TURNPIKE_CONFIG: file })).rejects.toThrow(
      'models[0].owned_by: must be one of alpha, beta, gamma, delta, got "nobody"',
    );
  });
  test("a keyed vendor without a base URL", async () => {
    const file = write("vendors:\n  acme:\n    protocol: chat\n");
    await expect(startHarness({ TURNPIKE_CONFIG: file, ACME_API_KEY: "k" })).rejects.toThrow(
      "vendor acme: a base URL must be set when ACME_API_KEY is",
    );
  });
});
