import { invalid } from "../vocabulary/client-errors";

/**
 * A 400 naming the first field that nests deeper than `limit`, found without recursion (the
 * walk itself must not be what overflows). Runs before any other step reads the body.
 */
export function checkDepth(root: unknown, limit: number): void {
  if (depthWithin(root, limit)) return;
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: root, depth: 1, path: "" }];
  while (stack.length) {
    const { value, depth, path } = stack.pop()!; // the loop runs only while the stack has an item
    if (depth > limit) {
      const field = path.split(/[.[]/)[0] || "body";
      throw invalid(
        `${field}: JSON nests deeper than the limit of ${limit} levels (at ${path.slice(0, 200)}…).`,
        field,
      );
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++)
        if (typeof value[i] === "object" && value[i] !== null)
          stack.push({ value: value[i], depth: depth + 1, path: `${path}[${i}]` });
    } else if (typeof value === "object" && value !== null) {
      for (const [k, v] of Object.entries(value))
        if (typeof v === "object" && v !== null)
          stack.push({ value: v, depth: depth + 1, path: path ? `${path}.${k}` : k });
    }
  }
}

/** Whether no value in `root` nests deeper than `limit`: the walk every request takes, with no field path built (that is done for the one that fails). */
export function depthWithin(root: unknown, limit: number): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [1];
  while (values.length) {
    const value = values.pop();
    const depth = depths.pop()!; // pushed and popped with its value
    if (depth > limit) return false;
    if (Array.isArray(value)) {
      for (const v of value) {
        if (typeof v !== "object" || v === null) continue;
        values.push(v);
        depths.push(depth + 1);
      }
    } else if (typeof value === "object" && value !== null) {
      for (const k in value) {
        const v = (value as Record<string, unknown>)[k];
        if (typeof v !== "object" || v === null) continue;
        values.push(v);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}
