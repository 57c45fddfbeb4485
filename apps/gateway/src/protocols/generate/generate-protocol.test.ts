import { describe, expect, test } from "bun:test";
import type { MessagesRequest } from "@turnpike/schema";
import { testTarget } from "../../../test/support/test-deps";
import { MemorySignatures } from "../../stored-responses/signature-store";
import type { SignatureStore } from "../../vocabulary/signature-store";
import { generateProtocol } from "./generate-protocol";

const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 10 } };
const noHeaders = new Headers();

/** A replayed tool call (`toolu_1`) and its result. */
const replay = {
  model: "gamma-3-pro",
  max_tokens: 100,
  messages: [
    { role: "user", content: "weather?" },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "sunny" }] },
  ],
  tools: [
    {
      name: "get_weather",
      description: "w",
      input_schema: { type: "object", properties: { city: { type: "string" } } },
    },
  ],
} as MessagesRequest;

type Part = { functionCall?: { name: string; args: unknown }; thoughtSignature?: string };

function callPart(b: Record<string, unknown>): Part | undefined {
  const contents = b.contents as { role: string; parts: Part[] }[];
  return contents.find((c) => c.role === "model")?.parts.find((p) => p.functionCall);
}

describe("generate protocol: buildRequest", () => {
  test("JSON: :generateContent with x-goog-api-key; the model id is escaped", async () => {
    const req = await generateProtocol.buildRequest(testTarget("gamma-3-pro"), body, {
      stream: false,
      clientHeaders: noHeaders,
    });
    expect(req.url).toBe("https://vendor.example/base/v1beta/models/gamma-3-pro:generateContent");
    expect(req.headers).toEqual({ "content-type": "application/json", "x-goog-api-key": "vendor-key" });
    expect(JSON.parse(req.body)).toEqual(body);
    const odd = testTarget("gamma-3-pro");
    const escaped = await generateProtocol.buildRequest(
      { ...odd, entry: { ...odd.entry, upstream_model: "a/b c" } },
      body,
      { stream: false, clientHeaders: noHeaders },
    );
    expect(escaped.url).toBe("https://vendor.example/base/v1beta/models/a%2Fb%20c:generateContent");
  });

  test("stream: :streamGenerateContent?alt=sse", async () => {
    const req = await generateProtocol.buildRequest(testTarget("gamma-3-flash"), body, {
      stream: true,
      clientHeaders: noHeaders,
    });
    expect(req.url).toBe("https://vendor.example/base/v1beta/models/gamma-3-flash:streamGenerateContent?alt=sse");
  });

  test("auth override: bearer instead of x-goog-api-key", async () => {
    const req = await generateProtocol.buildRequest(testTarget("gamma-3-pro", { auth: "bearer" }), body, {
      stream: false,
      clientHeaders: noHeaders,
    });
    expect(req.headers.authorization).toBe("Bearer vendor-key");
    expect(req.headers["x-goog-api-key"]).toBeUndefined();
  });
});

describe("generate protocol: counting", () => {
  test("count wraps the same body as generateContentRequest with the model's resource name", async () => {
    const req = await generateProtocol.count!(testTarget("gamma-3-pro"), body, new Headers());
    expect(req.url).toBe("https://vendor.example/base/v1beta/models/gamma-3-pro:countTokens");
    expect(req.headers["x-goog-api-key"]).toBe("vendor-key");
    expect(JSON.parse(req.body)).toEqual({ generateContentRequest: { ...body, model: "models/gamma-3-pro" } });
  });

  test("readCount: totalTokens when it is a non-negative number", () => {
    expect(generateProtocol.readCount({ totalTokens: 17 })).toBe(17);
    expect(generateProtocol.readCount({ totalTokens: -3 })).toBeUndefined();
    expect(generateProtocol.readCount({ total_tokens: 17 })).toBeUndefined();
  });

  test("replyUsage: candidates plus thoughts are output; cached tokens leave the input", () => {
    const usageMetadata = {
      promptTokenCount: 10,
      candidatesTokenCount: 4,
      thoughtsTokenCount: 2,
      cachedContentTokenCount: 3,
      totalTokenCount: 16,
    };
    expect(generateProtocol.replyUsage({ usageMetadata })).toEqual({
      input_tokens: 7,
      output_tokens: 6,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 0,
      reasoning_tokens: 2,
    });
  });

  test("nothing passes through to this protocol", () => {
    const b: Record<string, unknown> = { ...body };
    generateProtocol.preparePassthrough(b, true);
    expect(b).toEqual(body);
    expect(generateProtocol.passthrough.text("data: {}\n\n")).toBe("");
  });
});

describe("generate protocol: fromPivot and thought signatures", () => {
  test("a stored signature of a replayed tool call is put back on its functionCall part", async () => {
    const signatures = new MemorySignatures();
    await signatures.set("toolu_1", "sig-abc");
    const out = await generateProtocol.fromPivot(replay, testTarget("gamma-3-pro"), signatures);
    const part = callPart(out.body);
    expect(part?.functionCall).toEqual({ name: "get_weather", args: { city: "Paris" } });
    expect(part?.thoughtSignature).toBe("sig-abc");
    expect(out.body.generationConfig).toEqual({ maxOutputTokens: 100 });
    expect(out.body.model).toBeUndefined();
  });

  test("the signatures asked for are those of the replayed tool calls, fetched once up front", async () => {
    const asked: string[][] = [];
    const store: SignatureStore = {
      getMany: (ids) => {
        asked.push([...ids]);
        return Promise.resolve(new Map([["toolu_1", "sig-xyz"]]));
      },
      set: () => Promise.resolve(),
    };
    const out = await generateProtocol.fromPivot(replay, testTarget("gamma-3-pro"), store);
    expect(asked).toEqual([["toolu_1"]]);
    expect(callPart(out.body)?.thoughtSignature).toBe("sig-xyz");
  });

  test("a signature the store does not hold: the vendor's skip placeholder is sent", async () => {
    const out = await generateProtocol.fromPivot(replay, testTarget("gamma-3-pro"), new MemorySignatures());
    expect(callPart(out.body)?.thoughtSignature).toBe("skip_thought_signature_validator");
  });

  test("a reply's tool call signature is stored under the tool_use id the client sees", async () => {
    const signatures = new MemorySignatures();
    const json = {
      candidates: [
        {
          content: {
            role: "model",
            parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "sig-new" }],
          },
          finishReason: "STOP",
        },
      ],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 },
    };
    const ctx = { model: "gamma-3-pro", stopSequences: undefined, toolNames: undefined, signatures, inputTokens: 0 };
    const reply = generateProtocol.reply(json, ctx);
    const use = reply.content.find((b) => b.type === "tool_use");
    expect(use?.type === "tool_use" && use.input).toEqual({ city: "Oslo" });
    const id = use?.type === "tool_use" ? use.id : "";
    expect(await signatures.getMany([id])).toEqual(new Map([[id, "sig-new"]]));
  });
});

describe("generate protocol: errors", () => {
  test("parseError maps a vendor 400 to invalid_request_error", () => {
    const err = generateProtocol.parseError(
      400,
      JSON.stringify({ error: { code: 400, status: "INVALID_ARGUMENT", message: "bad thing" } }),
      new Headers(),
    );
    expect(err.status).toBe(400);
    expect(err.type).toBe("invalid_request_error");
    expect(err.message).toBe("bad thing");
  });
});
