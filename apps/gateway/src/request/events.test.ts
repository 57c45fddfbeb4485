import { describe, expect, test } from "bun:test";
import { emit, fanout, type PipelineHooks } from "./events";
import { testContext } from "../../test/support/test-deps";

describe("emit", () => {
  test("a throwing subscriber does not stop the ones after it", () => {
    const ctx = testContext();
    const seen: string[] = [];
    const hooks: PipelineHooks[] = [
      { onFinish: (_c, status) => seen.push(`first ${status}`) },
      {
        onFinish: () => {
          throw new Error("subscriber bug");
        },
      },
      { onFinish: (c, status, record) => seen.push(`third ${c.id} ${status} ${record === undefined}`) },
    ];
    expect(() => emit(hooks, "onFinish", ctx, 401, undefined)).not.toThrow();
    expect(seen).toEqual(["first 401", `third ${ctx.id} 401 true`]);
  });

  test("only the event's own method is called, with its arguments; subscribers without it are skipped", () => {
    const ctx = testContext();
    const calls: string[] = [];
    const hooks: PipelineHooks[] = [
      { onStart: (c) => calls.push(`start ${c.id}`) },
      { onUpstreamResponse: (_c, status, ms) => calls.push(`response ${status} ${ms}`) },
      {},
    ];
    emit(hooks, "onUpstreamResponse", ctx, 529, 12.5);
    emit(hooks, "onStart", ctx);
    expect(calls).toEqual(["response 529 12.5", `start ${ctx.id}`]);
  });

  test("a subscriber's method is called on the subscriber (a class instance keeps its state)", () => {
    class Counter implements PipelineHooks {
      starts = 0;
      onStart(): void {
        this.starts++;
      }
    }
    const counter = new Counter();
    emit([counter], "onStart", testContext());
    emit([counter], "onStart", testContext());
    expect(counter.starts).toBe(2);
  });

  test("no subscribers: nothing happens", () => {
    expect(() => emit([], "onStart", testContext())).not.toThrow();
  });
});

describe("fanout: each event's calls, compiled once per hook set", () => {
  test("an event no subscriber implements has no fan-out, so its site makes no call", () => {
    const f = fanout([{ onStart: () => {} }, { onFinish: () => {} }, {}]);
    expect(Object.keys(f).sort()).toEqual(["onFinish", "onStart"]);
    expect(f.onFirstToken).toBeUndefined();
    expect(fanout([])).toEqual({});
  });

  test("one set's fan-out is made once; sets used in turn each keep their own subscribers", () => {
    const seen: string[] = [];
    const a: PipelineHooks[] = [{ onStart: (c) => seen.push(`a ${c.id}`) }];
    const b: PipelineHooks[] = [{ onStart: (c) => seen.push(`b ${c.id}`) }, { onStart: () => seen.push("b2") }];
    expect(fanout(a)).toBe(fanout(a));
    const ctx = testContext();
    fanout(a).onStart?.(ctx);
    fanout(b).onStart?.(ctx);
    fanout(a).onStart?.(ctx);
    expect(seen).toEqual([`a ${ctx.id}`, `b ${ctx.id}`, "b2", `a ${ctx.id}`]);
  });
});
