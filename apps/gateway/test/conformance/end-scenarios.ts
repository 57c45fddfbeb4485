/** Conformance rows about how a reply ends: stop sequence, max tokens, refusal, mid-stream error. */
import { countTextTokens } from "@turnpike/simulator";
import { expect } from "bun:test";
import { plainEnd, say, user, type Scenario } from "./scenario";
import { UPSTREAMS } from "./upstreams";

export const stopSequence: Scenario = {
  title: "stop sequence",
  upstreams: UPSTREAMS,
  messages: (model) => ({
    model,
    max_tokens: 200,
    stop_sequences: ["STOP"],
    messages: [user(say("one two STOP three four"))],
  }),
  chat: (model) => ({ model, stop: ["STOP"], messages: [user(say("one two STOP three four"))] }),
  // Only the messages protocol names the match; chat and generateContent report a natural stop,
  // and Turnpike claims `stop_sequence` only on evidence (packages/providers README "Stop sequences").
  // The Responses API has no stop sequences: a Responses client cannot send one, and one sent
  // to a Responses upstream is dropped with a warning (the whole text comes back).
  expect: ({ client, upstream }) => {
    if (client === "responses") return { text: "one two STOP three four", ...plainEnd };
    if (upstream.protocol === "responses")
      return { text: "one two STOP three four", ...plainEnd, warnings: ["stop_sequences"] };
    return upstream.protocol === "messages"
      ? { text: "one two ", stopReason: "stop_sequence", stopSequence: "STOP", finishReason: "stop" }
      : { text: "one two ", ...plainEnd, stopSequence: null };
  },
  upstream(body, { client, upstream }) {
    if (client === "responses" || upstream.protocol === "responses")
      expect(JSON.stringify(body)).not.toContain('"STOP"');
    else if (upstream.protocol === "generate") expect(body.generationConfig.stopSequences).toEqual(["STOP"]);
    else if (upstream.protocol === "chat") expect(body.stop).toEqual(["STOP"]);
    else expect(body.stop_sequences).toEqual(["STOP"]);
  },
};

const LONG = "The gateway translates every request and every reply between the formats without losing anything at all.";

export const maxTokens: Scenario = {
  title: "max tokens",
  upstreams: UPSTREAMS,
  messages: (model) => ({ model, max_tokens: 5, messages: [user(say(LONG))] }),
  chat: (model) => ({ model, max_completion_tokens: 5, messages: [user(say(LONG))] }),
  expect: () => ({
    text: (t) => {
      expect(LONG.startsWith(t)).toBe(true);
      expect(countTextTokens(t)).toBe(5);
    },
    stopReason: "max_tokens",
    finishReason: "length",
  }),
  upstream(body, { upstream }) {
    if (upstream.protocol === "generate") expect(body.generationConfig.maxOutputTokens).toBe(5);
    else if (upstream.protocol === "chat") expect(body.max_completion_tokens).toBe(5);
    else if (upstream.protocol === "responses") expect(body.max_output_tokens).toBe(5);
    else expect(body.max_tokens).toBe(5);
  },
};

export const refusal: Scenario = {
  title: "refusal / content filter",
  upstreams: UPSTREAMS,
  messages: (model) => ({ model, max_tokens: 200, messages: [user("Something forbidden. [sim refusal]")] }),
  chat: (model) => ({ model, messages: [user("Something forbidden. [sim refusal]")] }),
  expect: () => ({ text: "", stopReason: "refusal", finishReason: "content_filter" }),
};

const CUT = "one two three four five six seven eight";

export const midstreamError: Scenario = {
  title: "mid-stream error",
  upstreams: UPSTREAMS,
  messages: (model) => ({ model, max_tokens: 200, messages: [user(say(CUT, " midstream_error chunks=4"))] }),
  chat: (model) => ({ model, messages: [user(say(CUT, " midstream_error chunks=4"))] }),
  // A JSON call is whole (the directive cuts only streams). A stream stops after two of its four
  // pieces, with the upstream's in-band error in the client's own shape (docs/protocols.md §4.5 step 6, §4.6).
  // Chat and Responses vendors both break off with a `server_error`.
  expect: ({ upstream }) => {
    const serverError = upstream.protocol === "chat" || upstream.protocol === "responses";
    return {
      text: CUT,
      ...plainEnd,
      interrupted: {
        text: "one two three four",
        messages: { type: serverError ? "api_error" : "overloaded_error" },
        chat: serverError
          ? { type: "server_error", code: null }
          : { type: "service_unavailable_error", code: "server_is_overloaded" },
      },
    };
  },
};
