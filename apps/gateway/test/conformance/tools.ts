/** The tools the scenarios offer, in both client formats, and the arguments the simulator fills in. */

interface ToolSpec {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  /**
   * What the simulator generates for the schema's `required` properties (packages/simulator
   * README "Tools"): the first `enum` value, `minimum` for integers, `true` for booleans, else
   * "sample <name>". Key order follows `required`, so `JSON.stringify` matches its token count.
   */
  args: Record<string, unknown>;
}

export const WEATHER: ToolSpec = {
  name: "get_weather",
  description: "Current weather of a city",
  schema: {
    type: "object",
    properties: {
      city: { type: "string", description: "City name" },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      days: { type: "integer", minimum: 3 },
    },
    required: ["city", "unit", "days"],
  },
  args: { city: "sample city", unit: "celsius", days: 3 },
};

export const CLOCK: ToolSpec = {
  name: "get_time",
  description: "Local time in a time zone",
  schema: {
    type: "object",
    properties: { timezone: { type: "string" }, hour24: { type: "boolean" } },
    required: ["timezone", "hour24"],
  },
  args: { timezone: "sample timezone", hour24: true },
};

/** A tool without parameters: the simulator calls it with `{}`. */
export const NOW: ToolSpec = {
  name: "get_now",
  description: "The current time",
  schema: { type: "object", properties: {} },
  args: {},
};

export function messagesTools(...tools: ToolSpec[]) {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema }));
}

export function chatTools(...tools: ToolSpec[]) {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.schema },
  }));
}

/** A 1×1 PNG. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
