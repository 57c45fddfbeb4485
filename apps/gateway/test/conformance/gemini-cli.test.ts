/**
 * Gemini CLI end to end: the two calls Gemini CLI 0.61 makes for "Use read_file to read
 * notes.txt" (recorded through Turnpike, `agents/gemini-cli-*.json`: the first call with its
 * default tools and session context, and the call after `read_file` ran) replayed against every
 * catalog model, as the CLI sends them (`:streamGenerateContent?alt=sse`, its headers) and as
 * JSON. The first call gets the `read_file` call with the file's name (the simulator decides like
 * a model), the stream and the JSON reply agree, and the second call gets the answer built on the
 * tool's output. What Turnpike cannot carry to an upstream is exactly the warnings listed here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CATALOG_IDS, readSSE, startHarness, type Harness } from "../harness";
import firstCall from "./agents/gemini-cli-first-call.json";
import toolResultCall from "./agents/gemini-cli-tool-result.json";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

type Recorded = { path: string; headers: Record<string, string>; body: Record<string, unknown> };

/** The recorded call for another model: its path and user agent name the model. */
function replay(call: Recorded, model: string, stream: boolean): Promise<Response> {
  const path = call.path.replace("{model}", encodeURIComponent(model));
  const headers = {
    ...call.headers,
    "user-agent": call.headers["user-agent"]!.replace("{model}", model),
    "x-goog-api-key": h.key,
  };
  return fetch(`${h.url}${stream ? path : path.replace(":streamGenerateContent?alt=sse", ":generateContent")}`, {
    method: "POST",
    headers,
    body: JSON.stringify(call.body),
  });
}

interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
}

/** The reply's parts as a client rebuilds them: text joined, calls without their ids. */
function rebuilt(parts: Part[]): { text: string; calls: { name: string; args: unknown }[] } {
  return {
    text: parts
      .filter((p) => typeof p.text === "string" && !p.thought)
      .map((p) => p.text)
      .join(""),
    calls: parts.filter((p) => p.functionCall).map((p) => ({ name: p.functionCall!.name, args: p.functionCall!.args })),
  };
}

/**
 * The knobs of Gemini CLI's requests an upstream cannot take: a messages upstream takes no
 * `topP` with `temperature`; chat and Responses upstreams have no `topK`.
 */
const WARNINGS: Record<string, string[]> = {
  messages: ["generationConfig.topP"],
  chat: ["top_k"],
  generate: [],
  responses: ["top_k"],
};

describe("Gemini CLI's calls against every catalog model", () => {
  for (const model of CATALOG_IDS) {
    test(`${model}: the first call → read_file; the call after it → the answer; stream and JSON agree`, async () => {
      const protocol = h.gw.deps.catalog.get(model)!.protocol;
      const streamed = await replay(firstCall, model, true);
      expect(streamed.status).toBe(200);
      const warned = streamed.headers.get("x-turnpike-warning");
      expect(warned === null ? [] : warned.split(", ").map((w) => w.split(": ")[0])).toEqual(WARNINGS[protocol]!);
      const chunks = (await readSSE(streamed)).map(
        (f) =>
          JSON.parse(f.data) as {
            candidates: { content: { parts: Part[] }; finishReason?: string }[];
            modelVersion: string;
          },
      );
      expect(chunks.every((c) => c.modelVersion === model)).toBe(true);
      expect(chunks.at(-1)!.candidates[0]!.finishReason).toBe("STOP");
      const fromStream = rebuilt(chunks.flatMap((c) => c.candidates[0]!.content?.parts ?? []));
      expect(fromStream.calls).toEqual([{ name: "read_file", args: { file_path: "notes.txt" } }]);

      const json = (await (await replay(firstCall, model, false)).json()) as {
        candidates: { content: { parts: Part[] } }[];
      };
      expect(rebuilt(json.candidates[0]!.content.parts)).toEqual(fromStream);

      const answered = await replay(toolResultCall, model, true);
      expect(answered.status).toBe(200);
      const text = rebuilt(
        (await readSSE(answered)).flatMap(
          (f) =>
            (JSON.parse(f.data) as { candidates: { content?: { parts: Part[] } }[] }).candidates[0]!.content?.parts ??
            [],
        ),
      ).text;
      expect(text).toContain("after read_file returned: The secret word is pelican.");
    });
  }
});
