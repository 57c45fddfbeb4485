import { describe, expect, test } from "bun:test";
import { MemorySignatureStore } from "./signature-store.js";

describe("MemorySignatureStore", () => {
  test("evicts the least recently used entry", () => {
    const s = new MemorySignatureStore(2);
    s.set("a", "1");
    s.set("b", "2");
    expect(s.get("a")).toBe("1"); // a is now the most recent
    s.set("c", "3");
    expect(s.get("b")).toBeUndefined();
    expect(s.get("a")).toBe("1");
    expect(s.get("c")).toBe("3");
    expect(s.size).toBe(2);
  });
});
