/**
 * Every refusal that names a field names it as the client sent it, per client format — never the
 * path of the gateway's internal pivot (the messages format) or of a Responses request's chat
 * form. Each row is one refusal; each cell the request a client of that format sends to meet it
 * (a system or developer message first where the format has one, so that the client's indices
 * differ from the pivot's) and the path its error must name: `param` in the chat and Responses
 * envelopes, the message's leading path in the messages and generateContent ones (they have no
 * `param`). `null`: the format cannot express the request, or sends it to that model unchanged
 * (the vendor judges it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "./harness";

type Format = "messages" | "chat" | "responses" | "generate";
type Body = Record<string, unknown>;
interface Cell {
  model: string;
  body: Body;
  path: string;
}
interface Row {
  refusal: string;
  cells: Record<Format, Cell | null>;
}

const IMAGE_URL = "https://example.com/cat.png";
const BMP = "AAAA";
const sys = { role: "system", content: "Be brief." };
const dev = { role: "developer", content: "Be brief." };
const text = (t: string) => ({ type: "text", text: t });
const inputText = (t: string) => ({ type: "input_text", text: t });

const ROWS: Row[] = [
  {
    refusal: "an image by URL to an upstream that cannot fetch it",
    cells: {
      messages: {
        model: "gamma-3-flash",
        body: {
          messages: [
            {
              role: "user",
              content: [text("What is it?"), { type: "image", source: { type: "url", url: IMAGE_URL } }],
            },
          ],
        },
        path: "messages[0].content[1].source.url",
      },
      chat: {
        model: "gamma-3-flash",
        body: {
          messages: [
            sys,
            { role: "user", content: [text("What is it?"), { type: "image_url", image_url: { url: IMAGE_URL } }] },
          ],
        },
        path: "messages[1].content[1].image_url.url",
      },
      responses: {
        model: "gamma-3-pro",
        body: {
          input: [
            dev,
            { role: "user", content: [inputText("What is it?"), { type: "input_image", image_url: IMAGE_URL }] },
          ],
        },
        path: "input[1].content[1].image_url",
      },
      generate: null, // passes through to the generateContent vendor
    },
  },
  {
    refusal: "an image of a type the upstream does not take",
    cells: {
      messages: {
        model: "beta-5",
        body: {
          messages: [
            {
              role: "user",
              content: [
                text("What is it?"),
                { type: "image", source: { type: "base64", media_type: "image/bmp", data: BMP } },
              ],
            },
          ],
        },
        path: "messages[0].content[1].source.media_type",
      },
      chat: {
        model: "alpha-haiku-4-5",
        body: {
          messages: [
            sys,
            {
              role: "user",
              content: [text("What is it?"), { type: "image_url", image_url: { url: `data:image/bmp;base64,${BMP}` } }],
            },
          ],
        },
        path: "messages[1].content[1].image_url.url",
      },
      responses: {
        model: "gamma-3-flash",
        body: {
          input: [
            dev,
            {
              role: "user",
              content: [inputText("What is it?"), { type: "input_image", image_url: `data:image/bmp;base64,${BMP}` }],
            },
          ],
        },
        path: "input[1].content[1].image_url",
      },
      generate: {
        model: "alpha-haiku-4-5",
        body: {
          contents: [
            { role: "user", parts: [{ text: "What is it?" }, { inlineData: { mimeType: "image/bmp", data: BMP } }] },
          ],
        },
        path: "contents[0].parts[1].inlineData.mimeType",
      },
    },
  },
  {
    refusal: "a PDF by URL to a chat-completions upstream",
    cells: {
      messages: {
        model: "beta-5",
        body: {
          messages: [
            {
              role: "user",
              content: [
                text("Sum it up."),
                { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
              ],
            },
          ],
        },
        path: "messages[0].content[1].source",
      },
      chat: null, // a chat file part has no URL
      responses: {
        model: "beta-5.5",
        body: {
          input: [
            dev,
            {
              role: "user",
              content: [inputText("Sum it up."), { type: "input_file", file_url: "https://example.com/a.pdf" }],
            },
          ],
        },
        path: "input[1].content[1]",
      },
      generate: {
        model: "beta-5",
        body: {
          contents: [
            {
              role: "user",
              parts: [
                { text: "Sum it up." },
                { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/a.pdf" } },
              ],
            },
          ],
        },
        path: "contents[0].parts[1].fileData",
      },
    },
  },
  {
    refusal: "a file held by one vendor (an uploaded file id, a Files-API name)",
    cells: {
      messages: {
        model: "beta-5",
        body: {
          messages: [
            {
              role: "user",
              content: [text("What is it?"), { type: "image", source: { type: "file", file_id: "file_011" } }],
            },
          ],
        },
        path: "messages[0].content[1].source",
      },
      chat: {
        model: "alpha-haiku-4-5",
        body: {
          messages: [
            sys,
            { role: "user", content: [text("Sum it up."), { type: "file", file: { file_id: "file-abc" } }] },
          ],
        },
        path: "messages[1].content[1].file.file_id",
      },
      responses: {
        model: "gamma-3-flash",
        body: {
          input: [
            dev,
            { role: "user", content: [inputText("Sum it up."), { type: "input_file", file_id: "file-abc" }] },
          ],
        },
        path: "input[1].content[1].file_id",
      },
      generate: {
        model: "alpha-haiku-4-5",
        body: {
          contents: [
            {
              role: "user",
              parts: [{ text: "Sum it up." }, { fileData: { mimeType: "application/pdf", fileUri: "files/abc" } }],
            },
          ],
        },
        path: "contents[0].parts[1].fileData.fileUri",
      },
    },
  },
  {
    refusal: "a tool result that answers no call",
    cells: {
      messages: {
        model: "gamma-3-flash",
        body: {
          messages: [
            { role: "user", content: "Weather?" },
            { role: "assistant", content: "Checking." },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_nope", content: "18C" }] },
          ],
        },
        path: "messages[2].content[0].tool_use_id",
      },
      chat: {
        model: "gamma-3-flash",
        body: {
          messages: [
            sys,
            { role: "user", content: "Weather?" },
            { role: "assistant", content: "Checking." },
            { role: "tool", tool_call_id: "call_nope", content: "18C" },
          ],
        },
        path: "messages[3].tool_call_id",
      },
      responses: {
        model: "gamma-3-flash",
        body: {
          input: [
            dev,
            { role: "user", content: "Weather?" },
            { type: "function_call_output", call_id: "call_nope", output: "18C" },
          ],
        },
        path: "input[2].call_id",
      },
      generate: {
        model: "alpha-haiku-4-5",
        body: {
          contents: [
            { role: "user", parts: [{ text: "Weather?" }] },
            { role: "model", parts: [{ text: "Checking." }] },
            { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "18C" } } }] },
          ],
        },
        path: "contents[2].parts[0].functionResponse",
      },
    },
  },
  {
    refusal: "no turn with content",
    cells: {
      messages: null, // the format's own schema asks for a non-empty messages array
      chat: { model: "alpha-haiku-4-5", body: { messages: [sys] }, path: "messages" },
      responses: { model: "gamma-3-flash", body: { instructions: "Be brief.", input: [] }, path: "input" },
      generate: {
        model: "alpha-haiku-4-5",
        body: { contents: [{ role: "user", parts: [{ text: "" }] }] },
        path: "contents",
      },
    },
  },
  {
    refusal: "audio the upstream cannot take",
    cells: {
      messages: null, // the format has no audio blocks
      chat: {
        model: "alpha-haiku-4-5",
        body: {
          messages: [
            sys,
            {
              role: "user",
              content: [text("Hear this."), { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }],
            },
          ],
        },
        path: "messages[1].content[1]",
      },
      responses: null, // no audio input part
      generate: {
        model: "alpha-haiku-4-5",
        body: {
          contents: [
            { role: "user", parts: [{ text: "Hear this." }, { inlineData: { mimeType: "audio/wav", data: "AAAA" } }] },
          ],
        },
        path: "contents[0].parts[1].inlineData.mimeType",
      },
    },
  },
  {
    refusal: "a forced tool that is not offered",
    cells: {
      messages: null, // passes through to the messages vendor, which judges it
      chat: {
        model: "gamma-3-flash",
        body: {
          messages: [sys, { role: "user", content: "Weather?" }],
          tools: [
            { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } },
          ],
          tool_choice: { type: "function", function: { name: "get_time" } },
        },
        path: "tool_choice",
      },
      responses: {
        model: "alpha-haiku-4-5",
        body: {
          input: [dev, { role: "user", content: "Weather?" }],
          tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: {} } }],
          tool_choice: { type: "function", name: "get_time" },
        },
        path: "tool_choice",
      },
      generate: null, // allowedFunctionNames are read as a choice among the offered functions
    },
  },
  {
    refusal: "what only one protocol has (more than one choice, a vendor's cached contents, a call in a user turn)",
    cells: {
      messages: null,
      chat: { model: "gamma-3-flash", body: { messages: [sys, { role: "user", content: "Hi" }], n: 2 }, path: "n" },
      responses: null,
      generate: {
        model: "beta-5",
        body: {
          contents: [
            { role: "user", parts: [{ text: "Hi" }] },
            { role: "user", parts: [{ functionCall: { name: "get_weather", args: {} } }] },
          ],
        },
        path: "contents[1].parts[0].functionCall",
      },
    },
  },
  {
    refusal: "cached contents held by a generateContent vendor",
    cells: {
      messages: null,
      chat: null,
      responses: null,
      generate: {
        model: "delta-m3",
        body: { cachedContent: "cachedContents/abc", contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
        path: "cachedContent",
      },
    },
  },
  {
    refusal: "an image by URL inside a tool result, to an upstream that cannot fetch it",
    cells: {
      messages: {
        model: "gamma-3-pro",
        body: {
          messages: [
            { role: "user", content: "Look." },
            { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "snap", input: {} }] },
            {
              role: "user",
              content: [
                {
                  type: "tool_result",
                  tool_use_id: "toolu_1",
                  content: [{ type: "image", source: { type: "url", url: IMAGE_URL } }],
                },
              ],
            },
          ],
        },
        path: "messages[2].content[0].content[0].source.url",
      },
      chat: null, // a tool message holds text only
      responses: {
        model: "gamma-3-pro",
        body: {
          input: [
            { role: "user", content: "Look." },
            { type: "function_call", call_id: "call_1", name: "snap", arguments: "{}" },
            {
              type: "function_call_output",
              call_id: "call_1",
              output: [{ type: "input_image", image_url: IMAGE_URL }],
            },
          ],
        },
        path: "input[2].output[0]",
      },
      generate: null,
    },
  },
];

const PATH: Record<Format, (model: string) => string> = {
  messages: () => "/v1/messages",
  chat: () => "/v1/chat/completions",
  responses: () => "/v1/responses",
  generate: (model) => `/v1beta/models/${encodeURIComponent(model)}:generateContent`,
};

/** The request a client of the format sends: its body with the model (in the path for generateContent). */
function request(format: Format, cell: Cell, key: string): { path: string; init: RequestInit } {
  const headers: Record<string, string> = { "content-type": "application/json" };
  let body: Body = { ...cell.body, model: cell.model };
  if (format === "messages") {
    headers["x-api-key"] = key;
    headers["anthropic-version"] = "2023-06-01";
    body = { max_tokens: 100, ...body };
  } else if (format === "generate") {
    headers["x-goog-api-key"] = key;
    body = { ...cell.body };
  } else headers.authorization = `Bearer ${key}`;
  return { path: PATH[format](cell.model), init: { method: "POST", headers, body: JSON.stringify(body) } };
}

/** The field the error names: `param` where the envelope has it, else the message's leading path. */
function namedPath(format: Format, body: Record<string, any>): string | undefined {
  const error = body.error as Record<string, any> | undefined;
  const message = String(error?.message ?? "");
  const lead = /^([A-Za-z_][\w.[\]]*): /.exec(message)?.[1];
  if (format === "chat" || format === "responses") {
    // The message leads with the same path.
    expect(lead).toBe(error?.param);
    return error?.param ?? undefined;
  }
  return lead;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe("a refusal names the field in the client's own request", () => {
  for (const row of ROWS) {
    for (const format of ["messages", "chat", "responses", "generate"] as const) {
      const cell = row.cells[format];
      if (!cell) continue;
      test(`${row.refusal} — ${format} → ${cell.model}: ${cell.path}`, async () => {
        const { path, init } = request(format, cell, h.key);
        const res = await fetch(`${h.url}${path}`, init);
        const body = (await res.json()) as Record<string, any>;
        expect({ status: res.status, path: namedPath(format, body) }).toEqual({ status: 400, path: cell.path });
      });
    }
  }
});

test("the table has a cell in every client format", () => {
  for (const format of ["messages", "chat", "responses", "generate"] as const)
    expect(ROWS.filter((r) => r.cells[format] !== null).length).toBeGreaterThanOrEqual(4);
});

describe("a warning names the field in the client's own request too", () => {
  test("a Responses request's developer message after the conversation started: input[2].role", async () => {
    const { path, init } = request(
      "responses",
      {
        model: "alpha-haiku-4-5",
        body: {
          instructions: "Be brief.",
          input: [
            { role: "user", content: "Hi" },
            { role: "assistant", content: "Hello." },
            { role: "developer", content: "Now in French." },
          ],
        },
        path: "",
      },
      h.key,
    );
    const res = await fetch(`${h.url}${path}`, init);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-warning")).toContain(
      "input[2].role: a developer message after the conversation started was moved into the top-level system prompt",
    );
  });
});
