/** Conformance rows without tools: plain text, system prompt, multi-turn, image, thinking. */
import { expect } from "bun:test";
import { plainEnd, say, user, type Scenario } from "./scenario";
import { PNG_BASE64 } from "./tools";
import { DELTA, UPSTREAMS, type Upstream } from "./upstreams";

const TEXT = "Turnpike relays every byte: café, naïve, 東京 and 🚀 included.";

/** The roles of the upstream body's turns, whatever its protocol. */
function roles(body: Record<string, any>, up: Upstream): string[] {
  if (up.protocol === "responses") return body.input.map((i: any) => i.role);
  return up.protocol === "generate" ? body.contents.map((c: any) => c.role) : body.messages.map((m: any) => m.role);
}

/** The first content part of the first turn, whatever the protocol. */
function firstPart(body: Record<string, any>, up: Upstream): Record<string, any> {
  if (up.protocol === "responses") return body.input[0].content[0];
  return up.protocol === "generate" ? body.contents[0].parts[0] : body.messages[0].content[0];
}

export const plainText: Scenario = {
  title: "plain text",
  upstreams: [...UPSTREAMS, DELTA],
  messages: (model) => ({ model, max_tokens: 200, messages: [user(say(TEXT))] }),
  chat: (model) => ({ model, messages: [user(say(TEXT))] }),
  expect: () => ({ text: TEXT, ...plainEnd }),
};

export const systemPrompt: Scenario = {
  title: "system prompt",
  upstreams: UPSTREAMS,
  messages: (model) => ({ model, max_tokens: 200, system: "You are terse.", messages: [user(say(TEXT))] }),
  chat: (model) => ({ model, messages: [{ role: "system", content: "You are terse." }, user(say(TEXT))] }),
  expect: () => ({ text: TEXT, ...plainEnd }),
  upstream(body, { upstream }) {
    if (upstream.protocol === "generate") expect(body.systemInstruction.parts).toEqual([{ text: "You are terse." }]);
    else if (upstream.protocol === "chat")
      expect(body.messages[0]).toEqual({ role: "system", content: "You are terse." });
    else if (upstream.protocol === "responses")
      expect([body.instructions, body.input.length]).toEqual(["You are terse.", 1]);
    else expect([body.system, body.system?.[0]?.text]).toContain("You are terse.");
  },
};

export const multiTurn: Scenario = {
  title: "multi-turn",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    messages: [user("Hello there"), { role: "assistant", content: "Hi! How can I help?" }, user(say(TEXT))],
  }),
  chat: (model) => ({
    model,
    messages: [user("Hello there"), { role: "assistant", content: "Hi! How can I help?" }, user(say(TEXT))],
  }),
  expect: () => ({ text: TEXT, ...plainEnd }),
  upstream(body, { upstream }) {
    expect(roles(body, upstream)).toEqual(
      upstream.protocol === "generate" ? ["user", "model", "user"] : ["user", "assistant", "user"],
    );
    expect(JSON.stringify(body)).toContain("Hi! How can I help?");
  },
};

const IMAGE_TEXT = "A single pixel.";

export const image: Scenario = {
  title: "image",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    messages: [
      user([
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
        { type: "text", text: say(IMAGE_TEXT) },
      ]),
    ],
  }),
  chat: (model) => ({
    model,
    messages: [
      user([
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
        { type: "text", text: say(IMAGE_TEXT) },
      ]),
    ],
  }),
  expect: () => ({ text: IMAGE_TEXT, ...plainEnd }),
  upstream(body, { upstream }) {
    const first = firstPart(body, upstream);
    if (upstream.protocol === "generate")
      expect(first).toEqual({ inlineData: { mimeType: "image/png", data: PNG_BASE64 } });
    else if (upstream.protocol === "chat") expect(first.image_url.url).toBe(`data:image/png;base64,${PNG_BASE64}`);
    else if (upstream.protocol === "responses")
      expect(first).toMatchObject({ type: "input_image", image_url: `data:image/png;base64,${PNG_BASE64}` });
    else
      expect(first).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } });
  },
};

const THINK_TEXT = "The answer is four.";
const thought = (model: string) =>
  `Thinking about the request to ${model}: Think it over.. A deterministic answer follows.`;

export const thinking: Scenario = {
  title: "thinking",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 2048,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages: [user(`Think it over. [sim think text="${THINK_TEXT}"]`)],
  }),
  chat: (model) => ({
    model,
    reasoning_effort: "low",
    messages: [user(`Think it over. [sim think text="${THINK_TEXT}"]`)],
  }),
  expect: ({ upstream }) => ({ text: THINK_TEXT, thinking: thought(upstream.model), ...plainEnd }),
  upstream(body, { upstream }) {
    // low effort = a 1024-token budget (packages/providers README "Effort ⇄ budget").
    if (upstream.protocol === "generate")
      expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    else if (upstream.protocol === "chat") expect(body.reasoning_effort).toBe("low");
    // A Responses vendor shows its reasoning only as a summary: Turnpike asks for one.
    else if (upstream.protocol === "responses") expect(body.reasoning).toEqual({ effort: "low", summary: "auto" });
    else expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
  },
};
