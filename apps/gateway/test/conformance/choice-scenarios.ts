/**
 * Conformance rows added for coding agents and SDK features: forced `tool_choice` (any, a named
 * tool, none), an assistant prefill, and a PDF document. No directive picks the tool in the
 * forced rows: the simulator calls what the choice forces, as a model must.
 */
import { expect } from "bun:test";
import { plainEnd, say, user, type Scenario } from "./scenario";
import { CLOCK, WEATHER, chatTools, messagesTools } from "./tools";
import { UPSTREAMS } from "./upstreams";

const toolCallEnd = { text: "", stopReason: "tool_use", finishReason: "tool_calls" } as const;

/** `{type: "any"}` / `"required"`: the model must call a tool (docs/protocols.md §4.1). */
export const toolChoiceAny: Scenario = {
  title: "tool_choice any / required",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER, CLOCK),
    tool_choice: { type: "any" },
    messages: [user("Weather in Paris?")],
  }),
  chat: (model) => ({
    model,
    tools: chatTools(WEATHER, CLOCK),
    tool_choice: "required",
    messages: [user("Weather in Paris?")],
  }),
  expect: () => ({ ...toolCallEnd, toolCalls: [{ name: WEATHER.name, args: WEATHER.args }] }),
  upstream(body, { upstream }) {
    if (upstream.protocol === "generate") expect(body.toolConfig.functionCallingConfig.mode).toBe("ANY");
    else if (upstream.protocol === "chat" || upstream.protocol === "responses")
      expect(body.tool_choice).toBe("required");
    else expect(body.tool_choice).toEqual({ type: "any" });
  },
};

/** `{type: "tool", name}` / `{type: "function", function: {name}}`: that tool, not the first. */
export const toolChoiceNamed: Scenario = {
  title: "tool_choice naming a tool",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER, CLOCK),
    tool_choice: { type: "tool", name: CLOCK.name },
    messages: [user("What time is it?")],
  }),
  chat: (model) => ({
    model,
    tools: chatTools(WEATHER, CLOCK),
    tool_choice: { type: "function", function: { name: CLOCK.name } },
    messages: [user("What time is it?")],
  }),
  expect: () => ({ ...toolCallEnd, toolCalls: [{ name: CLOCK.name, args: CLOCK.args }] }),
  upstream(body, { upstream }) {
    if (upstream.protocol === "generate")
      expect(body.toolConfig.functionCallingConfig).toEqual({ mode: "ANY", allowedFunctionNames: [CLOCK.name] });
    else if (upstream.protocol === "chat")
      expect(body.tool_choice).toEqual({ type: "function", function: { name: CLOCK.name } });
    else if (upstream.protocol === "responses")
      expect(body.tool_choice).toEqual({ type: "function", name: CLOCK.name });
    else expect(body.tool_choice).toEqual({ type: "tool", name: CLOCK.name });
  },
};

const NONE_TEXT = "No tools were needed.";

/** `{type: "none"}` / `"none"`: tools offered, none called — the answer is text. */
export const toolChoiceNone: Scenario = {
  title: "tool_choice none",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER),
    tool_choice: { type: "none" },
    messages: [user(say(NONE_TEXT))],
  }),
  chat: (model) => ({ model, tools: chatTools(WEATHER), tool_choice: "none", messages: [user(say(NONE_TEXT))] }),
  expect: () => ({ text: NONE_TEXT, ...plainEnd }),
  upstream(body, { upstream }) {
    if (upstream.protocol === "generate") expect(body.toolConfig.functionCallingConfig.mode).toBe("NONE");
    else if (upstream.protocol === "chat" || upstream.protocol === "responses") expect(body.tool_choice).toBe("none");
    else expect(body.tool_choice).toEqual({ type: "none" });
  },
};

const PREFILL = "The answer is";
const PREFILL_TEXT = " forty-two.";

/** A trailing assistant turn is a prefill: it reaches every upstream as the conversation's last turn. */
export const assistantPrefill: Scenario = {
  title: "assistant prefill",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    messages: [user(say(PREFILL_TEXT)), { role: "assistant", content: PREFILL }],
  }),
  chat: (model) => ({ model, messages: [user(say(PREFILL_TEXT)), { role: "assistant", content: PREFILL }] }),
  expect: () => ({ text: PREFILL_TEXT, ...plainEnd }),
  upstream(body, { upstream }) {
    if (upstream.protocol === "generate")
      expect(body.contents.at(-1)).toEqual({ role: "model", parts: [{ text: PREFILL }] });
    else if (upstream.protocol === "chat")
      expect(body.messages.at(-1)).toEqual({ role: "assistant", content: PREFILL });
    else if (upstream.protocol === "responses")
      expect(body.input.at(-1)).toEqual({ role: "assistant", content: PREFILL });
    else expect(JSON.stringify(body.messages.at(-1))).toContain(PREFILL);
  },
};

/** "%PDF-1.4 …": a tiny document's base64, enough for every protocol's document shape. */
const PDF_BASE64 = btoa("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n");
const PDF_TEXT = "The document is short.";

/** A PDF: a `document` block (messages), a `file` part (chat), `inlineData` (generateContent) — §4.1. */
export const pdfDocument: Scenario = {
  title: "document (PDF)",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    messages: [
      user([
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF_BASE64 } },
        { type: "text", text: say(PDF_TEXT) },
      ]),
    ],
  }),
  chat: (model) => ({
    model,
    messages: [
      user([
        { type: "file", file: { filename: "doc.pdf", file_data: `data:application/pdf;base64,${PDF_BASE64}` } },
        { type: "text", text: say(PDF_TEXT) },
      ]),
    ],
  }),
  expect: () => ({ text: PDF_TEXT, ...plainEnd }),
  upstream(body, { upstream }) {
    const first =
      upstream.protocol === "responses"
        ? body.input[0].content[0]
        : upstream.protocol === "generate"
          ? body.contents[0].parts[0]
          : body.messages[0].content[0];
    if (upstream.protocol === "generate")
      expect(first).toEqual({ inlineData: { mimeType: "application/pdf", data: PDF_BASE64 } });
    else if (upstream.protocol === "chat")
      expect(first.file.file_data).toBe(`data:application/pdf;base64,${PDF_BASE64}`);
    else if (upstream.protocol === "responses")
      expect(first).toMatchObject({ type: "input_file", file_data: `data:application/pdf;base64,${PDF_BASE64}` });
    else
      expect(first).toMatchObject({
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: PDF_BASE64 },
      });
  },
};
