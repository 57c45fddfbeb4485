import { describe, expect, test } from "bun:test";
import { responsesFormat } from "./responses";

describe("responses format: the end of a stream", () => {
  const completed =
    'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r"},"sequence_number":9}\n\n';

  test("a piece that holds a whole terminal event ends the stream", () => {
    expect(responsesFormat.isTerminal(`event: response.output_item.done\ndata: {}\n\n${completed}`)).toBe(true);
    expect(responsesFormat.isTerminal('event: error\ndata: {"type":"error"}\n\n')).toBe(true);
    expect(responsesFormat.isTerminal('event: response.failed\ndata: {"type":"response.failed"}\n\n')).toBe(true);
  });

  test("a piece that ends inside the terminal event does not: the rest of its (large) response must follow", () => {
    expect(responsesFormat.isTerminal(completed.slice(0, 60))).toBe(false);
    expect(
      responsesFormat.isTerminal('event: response.output_text.delta\ndata: {"delta":"event: response.completed"}\n\n'),
    ).toBe(false);
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
