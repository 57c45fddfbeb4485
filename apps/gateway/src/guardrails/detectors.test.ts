import { describe, expect, test } from "bun:test";
import corpus from "./__fixtures__/corpus.json";
import { CATEGORIES, type Category, DEFAULT_PHONE_REGIONS, detect, luhn, wordsRegex } from "./detectors";

const all = { categories: new Set(CATEGORIES), patterns: [], words: undefined, phoneRegions: DEFAULT_PHONE_REGIONS };

/** Precision and recall of each category over the labelled corpus (a value counts only if found whole). */
function scores() {
  const by = new Map<string, { tp: number; fp: number; fn: number }>();
  const at = (l: string) => by.get(l) ?? (by.set(l, { tp: 0, fp: 0, fn: 0 }), by.get(l)!);
  for (const { text, expect: wanted } of corpus) {
    const found = detect(text, all).map((s) => `${s.label}\u0000${text.slice(s.start, s.end)}`);
    const want = wanted.map((w) => `${w.label}\u0000${w.value}`);
    for (const f of found) at(f.split("\u0000")[0]!)[want.includes(f) ? "tp" : "fp"]++;
    for (const w of want) if (!found.includes(w)) at(w.split("\u0000")[0]!).fn++;
  }
  return by;
}

describe("the offline detectors on the labelled corpus", () => {
  const by = scores();
  for (const c of CATEGORIES) {
    test(`${c}: precision and recall`, () => {
      const s = by.get(c) ?? { tp: 0, fp: 0, fn: 0 };
      const precision = s.tp / Math.max(1, s.tp + s.fp);
      const recall = s.tp / Math.max(1, s.tp + s.fn);
      // Every category has positives in the corpus; the figures are the README's.
      expect(s.tp).toBeGreaterThan(0);
      expect({ category: c, precision, recall }).toEqual({ category: c, precision: 1, recall: 1 });
    });
  }

  test("the corpus has positive and negative examples of every category", () => {
    for (const c of CATEGORIES) {
      expect(corpus.some((e) => e.expect.some((x) => x.label === c))).toBe(true);
    }
    expect(corpus.filter((e) => e.expect.length === 0).length).toBeGreaterThanOrEqual(20);
  });
});

describe("detector pieces", () => {
  test("Luhn", () => {
    expect(luhn("4111111111111111")).toBe(true);
    expect(luhn("4111111111111112")).toBe(false);
  });

  test("a category not asked for is not looked for", () => {
    const only = { ...all, categories: new Set<Category>(["email"]) };
    expect(detect("dana@example.com, 4111 1111 1111 1111", only).map((s) => s.label)).toEqual(["email"]);
  });

  test("custom patterns and words, whole words only, case-insensitive", () => {
    const set = {
      ...all,
      categories: new Set<Category>(),
      patterns: [["employee_id", /EMP-\d{6}/gu] as const],
      words: wordsRegex(["Project Falcon", "c++"]),
    };
    const text = "EMP-123456 works on project falcon in C++, not on Project Falconry.";
    expect(detect(text, set).map((s) => [s.label, text.slice(s.start, s.end)])).toEqual([
      ["employee_id", "EMP-123456"],
      ["word", "project falcon"],
      ["word", "C++"],
    ]);
  });

  test("overlaps: the earlier and longer span wins (a card is not also a phone number)", () => {
    const text = "4111 1111 1111 1111";
    expect(detect(text, all).map((s) => s.label)).toEqual(["card"]);
  });
});
