import type { LogFields, Logger } from "../../src/log/logger";

function line(level: string, message: string, fields: LogFields | undefined, error?: unknown): string {
  const parts = [`turnpike ${level}: ${message}`];
  for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) parts.push(`${k}=${v}`);
  if (error !== undefined)
    parts.push(error instanceof Error ? `error=${error.stack ?? error.message}` : `error=${String(error)}`);
  return parts.join(" ");
}

/** A logger that keeps its lines, for tests to read. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    error: (message, fields, error) => lines.push(line("error", message, fields, error)),
    warn: (message, fields) => lines.push(line("warn", message, fields)),
    info: (message, fields) => lines.push(line("info", message, fields)),
    request: (fields) => lines.push(line("info", "request", fields)),
  };
}
