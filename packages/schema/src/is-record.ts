/** A plain JSON object (not an array, not null): what a body, a config file or one of its sections must be. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
