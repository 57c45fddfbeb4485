import { describe, expect, test } from "bun:test";
import { responsesFormat } from "./responses";

describe("responses format: the end of a stream", () => {
  const completed =
    'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r"},"sequence_number":9}\n\n';

  test("a piece that holds a whole terminal event ends the stream", () => {
    expect(responsesFormat.isTerminal(`event: response.output_item.done\ndata: {}\n\n${completed}`)).toBe(true);
    expect(responsesFormat.isTerminal('event: error\ndata: {"type":"error"}\n\n')).toBe(true);
    expect(responsesFormat.isTerminal('event: response.failed\ndata: {"type":"response.failed"}\n\n')).toBe(true);
    expect(responsesFormat.isTerminal('event: response.incomplete\ndata: {"type":"response.incomplete"}\n\n')).toBe(
      true,
    );
    // The error event whole, the failed response after it not yet: the stream's end is out.
    expect(
      responsesFormat.isTerminal('event: error\ndata: {"type":"error"}\n\nevent: response.failed\ndata: {"ty'),
    ).toBe(true);
  });

  test("a piece that ends inside the terminal event does not: the rest of its (large) response must follow", () => {
    expect(responsesFormat.isTerminal(completed.slice(0, 60))).toBe(false);
    expect(
      responsesFormat.isTerminal('event: response.output_text.delta\ndata: {"delta":"event: response.completed"}\n\n'),
    ).toBe(false);
    // Names that only look like a terminal event's: a dot is not any character.
    expect(responsesFormat.isTerminal("event: responseXcompleted\ndata: {}\n\nevent: errors\ndata: {}\n\n")).toBe(
      false,
    );
    expect(responsesFormat.isTerminal("event: response.output_text.done\ndata: {}\n\n")).toBe(false);
  });
});

describe("responses format: a Responses vendor's own input items", () => {
  test("validate keeps them in place and checks the rest", () => {
    const body = {
      model: "m",
      input: [
        { type: "item_reference", id: "rs_1" },
        { role: "user", content: "hi" },
      ],
    };
    expect(responsesFormat.validate(body).body).toBe(body);
    expect(() =>
      responsesFormat.validate({
        model: "m",
        input: [
          { type: "item_reference", id: "rs_1" },
          { role: "wizard", content: "hi" },
        ],
      }),
    ).toThrow("input[1]");
  });
});
