/** Conformance rows with tools: one call, parallel calls, text then a call, a call without arguments, a result round trip. */
import { SKIP_THOUGHT_SIGNATURE } from "@turnpike/providers";
import { expect } from "bun:test";
import { plainEnd, user, type Scenario } from "./scenario";
import { CLOCK, NOW, WEATHER, chatTools, messagesTools } from "./tools";
import { DELTA, UPSTREAMS } from "./upstreams";

const toolCallEnd = { text: "", stopReason: "tool_use", finishReason: "tool_calls" } as const;

export const oneToolCall: Scenario = {
  title: "one tool call",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER),
    messages: [user("Weather in Paris? [sim tools=1]")],
  }),
  chat: (model) => ({ model, tools: chatTools(WEATHER), messages: [user("Weather in Paris? [sim tools=1]")] }),
  expect: () => ({ ...toolCallEnd, toolCalls: [{ name: WEATHER.name, args: WEATHER.args }] }),
  upstream(body, { upstream }) {
    // The tool definition reached the upstream in its own shape.
    if (upstream.protocol === "generate") expect(body.tools[0].functionDeclarations[0].name).toBe(WEATHER.name);
    else if (upstream.protocol === "chat") expect(body.tools[0].function.parameters).toEqual(WEATHER.schema);
    else if (upstream.protocol === "responses")
      expect(body.tools[0]).toMatchObject({ type: "function", name: WEATHER.name, parameters: WEATHER.schema });
    else expect(body.tools[0].input_schema).toEqual(WEATHER.schema);
  },
};

export const parallelToolCalls: Scenario = {
  title: "parallel tool calls",
  upstreams: [...UPSTREAMS, DELTA],
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER, CLOCK),
    messages: [user("Weather and time in Paris? [sim tools=2]")],
  }),
  chat: (model) => ({
    model,
    tools: chatTools(WEATHER, CLOCK),
    messages: [user("Weather and time in Paris? [sim tools=2]")],
  }),
  expect: () => ({
    ...toolCallEnd,
    toolCalls: [
      { name: WEATHER.name, args: WEATHER.args },
      { name: CLOCK.name, args: CLOCK.args },
    ],
  }),
};

const LEAD_IN = "Let me check both.";

/**
 * Text before the calls shifts the messages format's block indexes, never the chat tool ordinals
 * (docs/protocols.md §4.9 trap 9).
 */
export const textThenToolCall: Scenario = {
  title: "text, then a tool call",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER, CLOCK),
    messages: [user(`Weather and time? [sim tools=2 text="${LEAD_IN}"]`)],
  }),
  chat: (model) => ({
    model,
    tools: chatTools(WEATHER, CLOCK),
    messages: [user(`Weather and time? [sim tools=2 text="${LEAD_IN}"]`)],
  }),
  expect: () => ({
    ...toolCallEnd,
    text: LEAD_IN,
    toolCalls: [
      { name: WEATHER.name, args: WEATHER.args },
      { name: CLOCK.name, args: CLOCK.args },
    ],
  }),
};

/** A call without arguments streams only `partial_json: ""` on a messages upstream (§1.7); every client must still see `{}`. */
export const toolWithoutArguments: Scenario = {
  title: "tool call without arguments",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(NOW),
    messages: [user("What time is it? [sim tools=1]")],
  }),
  chat: (model) => ({ model, tools: chatTools(NOW), messages: [user("What time is it? [sim tools=1]")] }),
  expect: () => ({ ...toolCallEnd, toolCalls: [{ name: NOW.name, args: {} }] }),
};

const RESULT = "18 C and sunny, light wind from the west";

export const toolResultRoundTrip: Scenario = {
  title: "tool-result round trip",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    tools: messagesTools(WEATHER),
    messages: [
      user("Weather in Paris?"),
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_prev_1", name: WEATHER.name, input: WEATHER.args }],
      },
      user([{ type: "tool_result", tool_use_id: "toolu_prev_1", content: RESULT }]),
    ],
  }),
  chat: (model) => ({
    model,
    tools: chatTools(WEATHER),
    messages: [
      user("Weather in Paris?"),
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_prev_1",
            type: "function",
            function: { name: WEATHER.name, arguments: JSON.stringify(WEATHER.args) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_prev_1", content: RESULT },
    ],
  }),
  // The simulator names the tool whose result it read: proof that the name went upstream.
  expect: ({ upstream }) => ({
    text: (t) =>
      expect(t).toStartWith(
        `Simulated reply from ${upstream.model} after ${WEATHER.name} returned: ${RESULT} and the simulator`,
      ),
    ...plainEnd,
  }),
  upstream(body, { client, upstream }) {
    const id = client === "messages" || client === "generate" ? "toolu_prev_1" : "call_prev_1";
    if (upstream.protocol === "generate" && client === "generate") {
      // Passed through as the client wrote it: its ids, and the signature it replays.
      expect(body.contents[1].parts[0]).toEqual({
        functionCall: { id, name: WEATHER.name, args: WEATHER.args },
        thoughtSignature: SKIP_THOUGHT_SIGNATURE,
      });
      expect(body.contents[2].parts[0].functionResponse).toEqual({
        id,
        name: WEATHER.name,
        response: { output: RESULT },
      });
    } else if (upstream.protocol === "generate") {
      // Gemini needs the function's name back (§4.7), and on Gemini 3 a signature on the call
      // (§3.7): Turnpike never saw this call, so the documented escape hatch goes instead.
      expect(body.contents[1].parts[0]).toEqual({
        functionCall: { name: WEATHER.name, args: WEATHER.args },
        thoughtSignature: SKIP_THOUGHT_SIGNATURE,
      });
      expect(body.contents[2].parts[0].functionResponse.name).toBe(WEATHER.name);
      expect(JSON.stringify(body.contents[2].parts[0].functionResponse.response)).toContain(RESULT);
    } else if (upstream.protocol === "chat") {
      expect(body.messages[1].tool_calls[0].id).toBe(id);
      expect(body.messages[2]).toEqual({ role: "tool", tool_call_id: id, content: RESULT });
    } else if (upstream.protocol === "responses") {
      expect(body.input[1]).toMatchObject({ type: "function_call", call_id: id, name: WEATHER.name });
      expect(JSON.parse(body.input[1].arguments)).toEqual(WEATHER.args);
      expect(body.input[2]).toEqual({ type: "function_call_output", call_id: id, output: RESULT });
    } else {
      expect(body.messages[1].content[0]).toMatchObject({
        type: "tool_use",
        id,
        name: WEATHER.name,
        input: WEATHER.args,
      });
      expect(body.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: id });
    }
  },
};
