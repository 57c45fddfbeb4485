/** Fields of a log line: the request id and whatever else tells what happened (never a secret). */
export type LogFields = Record<string, string | number | boolean | undefined>;

/** The one logger of the gateway: the pipeline and the servers log through it, never `console` directly. */
export interface Logger {
  error(message: string, fields?: LogFields, error?: unknown): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
}

function line(level: string, message: string, fields: LogFields | undefined, error?: unknown): string {
  const parts = [`turnpike ${level}: ${message}`];
  for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) parts.push(`${k}=${v}`);
  if (error !== undefined) parts.push(error instanceof Error ? `error=${error.stack ?? error.message}` : `error=${String(error)}`);
  return parts.join(" ");
}

/** Lines on standard error (info on standard output), `key=value` fields after the message. */
export function consoleLogger(): Logger {
  return {
    error: (message, fields, error) => console.error(line("error", message, fields, error)),
    warn: (message, fields) => console.error(line("warn", message, fields)),
    info: (message, fields) => console.log(line("info", message, fields)),
  };
}

/** A logger that keeps its lines (tests). */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    error: (message, fields, error) => lines.push(line("error", message, fields, error)),
    warn: (message, fields) => lines.push(line("warn", message, fields)),
    info: (message, fields) => lines.push(line("info", message, fields)),
  };
}
