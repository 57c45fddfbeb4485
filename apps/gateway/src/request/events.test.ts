import { describe, expect, test } from "bun:test";
import { emit, type PipelineHooks } from "./events";
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
