import { describe, expect, test } from "bun:test";
import { ModelLabel, namedModel } from "./model-label";

describe("ModelLabel", () => {
  test("learns the vendor's name from the first frame that has one and relabels every later one", () => {
    const label = new ModelLabel("alpha-sonnet-4-6");
    expect(label.learn('event: ping\ndata: {"type":"ping"}\n\n')).toBe(false);
    const start =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"alpha-sonnet-4-6-20250929","content":[]}}\n\n';
    expect(label.learn(start)).toBe(true);
    expect(label.upstream).toBe("alpha-sonnet-4-6-20250929");
    expect(label.changes).toBe(true);
    expect(label.apply(start)).toBe(
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"alpha-sonnet-4-6","content":[]}}\n\n',
    );
    // A space after the colon (some servers' JSON) is relabelled too; a later frame's name is not re-learned.
    expect(label.learn('data: {"model": "other"}')).toBe(true);
    expect(label.apply('data: {"model": "alpha-sonnet-4-6-20250929","x":1}')).toBe(
      'data: {"model":"alpha-sonnet-4-6","x":1}',
    );
  });

  test("a vendor that names the catalog id changes nothing", () => {
    const label = new ModelLabel("beta-5");
    expect(label.learn('data: {"id":"c","model":"beta-5","choices":[]}\n\n')).toBe(true);
    expect(label.changes).toBe(false);
    const frame = 'data: {"id":"c","model":"beta-5","choices":[]}\n\n';
    expect(label.apply(frame)).toBe(frame);
  });

  test("names with escapes are read as JSON strings", () => {
    const label = new ModelLabel("m");
    label.learn('data: {"model":"a\\"b"}');
    expect(label.upstream).toBe('a"b');
    expect(label.apply('data: {"model":"a\\"b"}')).toBe('data: {"model":"m"}');
  });
});

describe("namedModel", () => {
  test("the first name under the key; an empty name (a content-filter chunk's) is none", () => {
    expect(namedModel('data: {"choices":[],"model":"","id":""}')).toBeUndefined();
    expect(namedModel('{"candidates":[],"modelVersion":"gamma-3-flash-001"}', "modelVersion")?.name).toBe(
      "gamma-3-flash-001",
    );
    expect(namedModel('{"modelVersion":"g"}')).toBeUndefined();
  });
});
