/**
 * Runs the cells of the conformance table: scenario × client format × upstream protocol × JSON /
 * stream, each against a real gateway whose vendors are the simulator.
 *
 * Expected usage is computed independently of Turnpike: input = the simulator's own count of the
 * body that reached it (`countPromptTokens`), output = the tokens of the thinking, text and
 * tool-argument JSON the client received (`countTextTokens`; the messages protocol never reports
 * 0, docs/protocols.md §1.6). A stream must also rebuild exactly what the JSON call of the same
 * request returns (tool-call ids aside: they are per reply).
 */
import { countPromptTokens, countTextTokens, type CapturedRequest } from "@turnpike/simulator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readSSE, startHarness, type Harness } from "../harness";
import { asRecord, localCount, readJson, withoutIds, type Outcome } from "./outcome";
import { readChatJson, readChatStream } from "./read-chat";
import { generateBody } from "./generate-body";
import { generateStop, readGenerateJson, readGenerateStream } from "./read-generate";
import { readMessagesJson, readMessagesStream } from "./read-messages";
import { readResponsesJson, readResponsesStream, responsesStop } from "./read-responses";
import { responsesBody } from "./responses-body";
import { simSignature, tableUpstreams, type Cell, type Expectation, type Scenario } from "./scenario";
import { RESPONSES_VENDOR_ENV, TABLE_CLIENTS, tableClientPath, upstreamPath } from "./upstreams";

/** Registers every cell of the given scenarios, on one gateway per test file. */
export function runScenarios(scenarios: readonly Scenario[]): void {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(RESPONSES_VENDOR_ENV);
  });
  afterAll(async () => {
    await h.close();
  });
  for (const s of scenarios) {
    describe(s.title, () => {
      for (const upstream of tableUpstreams(s)) {
        for (const client of TABLE_CLIENTS) {
          for (const stream of [false, true]) {
            const name = `${client} client ← ${upstream.label} upstream (${upstream.model}), ${stream ? "stream" : "JSON"}`;
            test(name, () => runCell(h, s, { client, upstream, stream }));
          }
        }
      }
    });
  }
}

/** The client's request body for a cell; chat streams ask for the usage chunk. */
export function requestBody(s: Scenario, { client, upstream, stream }: Cell): Record<string, unknown> {
  // A generateContent client says "stream" in its path, never in its body.
  if (client === "generate") return generateBody(s.messages(upstream.model));
  const body =
    client === "messages"
      ? s.messages(upstream.model)
      : client === "chat"
        ? s.chat(upstream.model)
        : (s.responses?.(upstream.model, upstream) ?? responsesBody(s.chat(upstream.model), upstream));
  if (!stream) return body;
  return client === "chat"
    ? { ...body, stream: true, stream_options: { include_usage: true } }
    : { ...body, stream: true };
}

interface Called {
  res: Response;
  /** What reached the simulator. */
  sent: CapturedRequest;
}

async function call(h: Harness, cell: Cell, body: Record<string, unknown>): Promise<Called> {
  const { client, upstream, stream } = cell;
  const headers = client === "generate" ? { "x-goog-api-key": h.key } : undefined;
  const res = await h.call(tableClientPath(client, upstream.model, stream), {
    method: "POST",
    ...(client === "generate" ? { headers } : { dialect: client }),
    body: JSON.stringify(body),
  });
  const sent = h.gw.simulator!.requests.at(-1)!;
  return { res, sent };
}

async function jsonOutcome(cell: Cell, res: Response): Promise<Outcome> {
  expect(res.headers.get("content-type")).toStartWith("application/json");
  const body = await readJson(res);
  if (cell.client === "responses") return readResponsesJson(body, cell.upstream.model);
  if (cell.client === "generate") return readGenerateJson(body, cell.upstream.model);
  return cell.client === "messages"
    ? readMessagesJson(body, cell.upstream.model)
    : readChatJson(body, cell.upstream.model);
}

/** What every upstream call must look like, whatever the scenario. */
function checkSent(sent: CapturedRequest, cell: Cell): void {
  const { upstream, stream } = cell;
  expect(sent.path).toBe(upstreamPath(upstream, stream));
  const body = asRecord(sent.body);
  expect(body.turnpike).toBeUndefined();
  if (upstream.protocol !== "generate") {
    expect(body.model).toBe(upstream.model);
    expect(body.stream === true).toBe(stream);
  }
  // Chat upstreams are always asked for usage on a stream (docs/protocols.md §4.1, trap 5).
  if (upstream.protocol === "chat") expect(body.stream_options).toEqual(stream ? { include_usage: true } : undefined);
}

export async function runCell(h: Harness, s: Scenario, cell: Cell): Promise<void> {
  const { client, upstream, stream } = cell;
  const exp = s.expect(cell);
  const body = requestBody(s, cell);
  const { res, sent } = await call(h, cell, body);
  expect(res.status).toBe(200);
  expect(res.headers.get("x-turnpike-upstream")).toBe("simulator");
  // Nothing in these requests is lossy unless the row says so: a warning means something was dropped.
  const warned = res.headers.get("x-turnpike-warning");
  if (!exp.warnings) expect(warned).toBeNull();
  else for (const param of exp.warnings) expect(warned).toStartWith(`${param}: `);
  checkSent(sent, cell);
  s.upstream?.(asRecord(sent.body), cell);
  const prompt = countPromptTokens(upstream.protocol, sent.body);

  if (!stream) {
    expectOutcome(await jsonOutcome(cell, res), exp, cell, prompt);
    return;
  }
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const frames = await readSSE(res);
  let outcome: Outcome;
  if (client === "messages") {
    const read = readMessagesStream(frames, upstream.model);
    // The input count is in message_start already: exact where the upstream can count (a
    // messages upstream says it there; generateContent is asked with countTokens alongside the
    // call); on a chat upstream, which has no count call, Turnpike's local count of the prompt —
    // then message_delta carries the upstream's number (issue item 4).
    expect(read.startInput).toBe(upstream.protocol === "chat" ? localCount(body) : prompt);
    if (exp.interrupted) {
      expect(read.error?.type).toBe(exp.interrupted.messages.type);
      expect(read.error?.message).not.toBe("");
      expect(read.outcome.text).toBe(exp.interrupted.text);
      expect(read.outcome.stop).toBeNull();
      return;
    }
    expect(read.error).toBeUndefined();
    expect(read.deltaInput).toBe(prompt);
    outcome = read.outcome;
  } else if (client === "generate") {
    const read = readGenerateStream(frames, upstream.model);
    if (exp.interrupted) {
      // The format's status word: the vendor's own passes through; a translated one is the pivot error's.
      expect(read.error?.type).toBe(exp.interrupted.messages.type === "overloaded_error" ? "UNAVAILABLE" : "INTERNAL");
      expect(read.error?.message).not.toBe("");
      expect(read.outcome.text).toBe(exp.interrupted.text);
      return;
    }
    expect(read.error).toBeUndefined();
    outcome = read.outcome;
  } else if (client === "responses") {
    const read = readResponsesStream(frames, upstream.model);
    if (exp.interrupted) {
      // A Responses vendor's own error code passes through; a translated one is the pivot's error type.
      expect(read.error?.type).toBe(upstream.protocol === "responses" ? "server_error" : exp.interrupted.messages.type);
      expect(read.error?.message).not.toBe("");
      expect(read.outcome.text).toBe(exp.interrupted.text);
      return;
    }
    expect(read.error).toBeUndefined();
    outcome = read.outcome;
  } else {
    const read = readChatStream(frames, upstream.model);
    if (exp.interrupted) {
      expect(read.error).toMatchObject(exp.interrupted.chat);
      expect(read.error?.message).not.toBe("");
      expect(read.outcome.text).toBe(exp.interrupted.text);
      expect(read.outcome.stop).toBeNull();
      expect(read.usageChunk).toBe(false);
      return;
    }
    expect(read.error).toBeUndefined();
    expect(read.usageChunk).toBe(true);
    outcome = read.outcome;
  }
  expectOutcome(outcome, exp, cell, prompt);

  // The stream rebuilds exactly what the JSON call of the same request returns.
  const again = await call(
    h,
    { ...cell, stream: false },
    client === "generate" ? body : { ...body, stream: false, stream_options: undefined },
  );
  expect(again.res.status).toBe(200);
  expect(withoutIds(outcome)).toEqual(withoutIds(await jsonOutcome(cell, again.res)));
}

/** Checks an outcome against a scenario's expectation, with usage computed from what was sent and received. */
function expectOutcome(o: Outcome, exp: Expectation, { client, upstream }: Cell, prompt: number): void {
  const text = o.text ?? "";
  if (typeof exp.text === "string") expect(text).toBe(exp.text);
  else exp.text(text);
  // A reply without text has no text block (messages) and `content: null` (chat).
  if (text === "") expect(o.text).toBeNull();
  const thinking = exp.thinking ?? "";
  expect(o.thinking).toBe(thinking);
  const calls = exp.toolCalls ?? [];
  expect(o.toolCalls.map(({ name, args }) => ({ name, args }))).toEqual(calls);
  if (client === "generate" && upstream.protocol === "generate") {
    // Passed through: the vendor's calls, which carry no ids.
    for (const c of o.toolCalls) expect(c.id).toBeUndefined();
  } else {
    for (const c of o.toolCalls) expect(c.id).toMatch(upstream.toolId);
    expect(new Set(o.toolCalls.map((c) => c.id)).size).toBe(o.toolCalls.length);
  }
  if (client === "messages") {
    expect(o.stop).toBe(exp.stopReason);
    expect(o.stopSequence).toBe(exp.stopSequence ?? null);
    const blocks = [...(thinking ? ["thinking"] : []), ...(text ? ["text"] : []), ...calls.map(() => "tool_use")];
    expect(o.blocks).toEqual(blocks);
    // Only the messages protocol signs thinking; other upstreams' thinking is unsigned.
    if (thinking) expect(o.signatures).toEqual([upstream.protocol === "messages" ? simSignature(thinking) : ""]);
  } else if (client === "generate") {
    expect(o.stop).toBe(generateStop(exp.stopReason));
  } else if (client === "responses") {
    expect(o.stop).toBe(responsesStop(exp.finishReason));
  } else {
    expect(o.stop).toBe(exp.finishReason);
  }
  const generated =
    countTextTokens(thinking) +
    countTextTokens(text) +
    calls.reduce((n, c) => n + countTextTokens(JSON.stringify(c.args)), 0);
  const usage: Outcome["usage"] = {
    input: prompt,
    output: upstream.protocol === "messages" ? Math.max(1, generated) : generated,
  };
  // Chat and generateContent upstreams state the thinking share; the messages protocol does not.
  if (thinking && upstream.protocol !== "messages") usage.reasoning = countTextTokens(thinking);
  expect(o.usage).toEqual(usage);
}
