import { describe, expect, test } from "bun:test";
import { LADDER_STEPS, allocate, allocateBytes, stepsFrom } from "../features-floor/src/steps";
import { type Rung, byThreadName, ladderMarkdown, ladderRows } from "./ladder-table";

const threads = (js: number) => ({ js, "http client": 10, "gc, jit and others": 2 });
const rung = (name: string, cpu: number[]): Rung => ({ name, cpu, threads: threads(cpu[0]! - 12) });

describe("FLOOR_STEP", () => {
  test("a count turns on the first steps, in the ladder's order", () => {
    expect([...stepsFrom("2")]).toEqual(["server", "modules"]);
    expect([...stepsFrom(String(LADDER_STEPS.length))]).toEqual([...LADDER_STEPS]);
  });

  test("unset or 0 is the features floor as it is", () => {
    expect(stepsFrom(undefined).size).toBe(0);
    expect(stepsFrom("").size).toBe(0);
    expect(stepsFrom("0").size).toBe(0);
  });

  test("names turn on those steps alone", () => {
    expect([...stepsFrom("cells, spin")]).toEqual(["cells", "spin"]);
  });

  test("an unknown step or too many are refused, naming the steps", () => {
    expect(() => stepsFrom("heap")).toThrow(
      'no step "heap"; one of server, modules, booted, cells, bytes, spin, garbage',
    );
    expect(() => stepsFrom("9")).toThrow("there are 7 steps");
  });
});

describe("the cells step", () => {
  test("allocates what it is told and holds it", async () => {
    const held: unknown[] = [];
    await allocate({ strings: 3, objects: 4, arrays: 2, closures: 5, promises: 6 }, held);
    expect(held.filter((x) => typeof x === "string")).toHaveLength(3);
    expect(held.filter((x) => Array.isArray(x))).toHaveLength(2);
    expect(held.filter((x) => typeof x === "function")).toHaveLength(5);
    // Each awaited promise leaves its number.
    expect(held.filter((x) => typeof x === "number")).toEqual([0, 1, 2, 3, 4, 5]);
    expect(held).toHaveLength(3 + 4 + 2 + 5 + 6);
  });
});

describe("the bytes step", () => {
  test("holds as many 1 KiB strings as asked", () => {
    const held: unknown[] = [];
    allocateBytes(3, held);
    expect(held.map((s) => (s as string).length)).toEqual([1024, 1024, 1024]);
  });
});

describe("ladderRows", () => {
  // Three rounds: floor 40, features 50, two steps (+5 then +10), Turnpike 80 (gap 30).
  const rungs = [
    rung("metering floor", [40, 40, 50]),
    rung("features floor", [50, 50, 60]),
    rung("+ a", [55, 56, 64]),
    rung("+ b", [65, 66, 74]),
    rung("Turnpike", [80, 80, 90]),
  ];

  test("each rung over the metering floor, round by round", () => {
    const rows = ladderRows(rungs, { floor: 0, features: 1, turnpike: 4, steps: [2, 3] });
    expect(rows[1]!.overFloor).toEqual({ median: 1.25, min: 1.2, max: 1.25 });
    expect(rows[4]!.us).toBe(80);
    expect(rows[4]!.overFloor.median).toBe(2);
  });

  test("a climbed step is read against the rung below it, and as a share of the gap", () => {
    const rows = ladderRows(rungs, { floor: 0, features: 1, turnpike: 4, steps: [2, 3] });
    expect(rows[2]!.step).toBe(5);
    expect(rows[2]!.share).toBeCloseTo(5 / 30);
    expect(rows[3]!.step).toBe(10);
    expect(rows[3]!.share).toBeCloseTo(10 / 30);
    expect(rows[0]!.step).toBeUndefined();
    expect(rows[4]!.step).toBeUndefined();
  });

  test("steps taken alone are each read against the features floor", () => {
    const rows = ladderRows(rungs, { floor: 0, features: 1, turnpike: 4, steps: [2, 3], isolated: true });
    expect(rows[3]!.step).toBe(15);
  });

  test("rungs with different numbers of rounds are refused", () => {
    expect(() =>
      ladderRows([rung("metering floor", [1, 2]), rung("x", [1])], { floor: 0, features: 1, turnpike: 1, steps: [] }),
    ).toThrow("x: 1 rounds, the floor has 2");
  });

  test("the Markdown table has a row a rung, with signed steps and shares", () => {
    const md = ladderMarkdown(ladderRows(rungs, { floor: 0, features: 1, turnpike: 4, steps: [2, 3] }));
    const lines = md.split("\n");
    expect(lines).toHaveLength(2 + rungs.length);
    expect(lines[4]).toBe("| + a | 56.0 | 1.38× (1.28–1.40) | +5.0 | 17 % | 43.0 | 10.0 | 2.0 |");
  });
});

describe("byThreadName", () => {
  test("sums a name's threads, counts a new thread from zero, per request, largest first", () => {
    const before = new Map([
      [1, { name: "bun", us: 1000 }],
      [2, { name: "HeapHelper", us: 100 }],
      [3, { name: "HeapHelper", us: 50 }],
    ]);
    const after = new Map([
      [1, { name: "bun", us: 3000 }],
      [2, { name: "HeapHelper", us: 1100 }],
      [3, { name: "HeapHelper", us: 1050 }],
      [4, { name: "JITWorker", us: 400 }],
    ]);
    expect(byThreadName(before, after, 100)).toEqual([
      ["bun", 20],
      ["HeapHelper", 20],
      ["JITWorker", 4],
    ]);
  });
});
