import pino, { type DestinationStream } from "pino";
import { secretScrubber } from "./scrub-secrets";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Fields of a log line: the request id and whatever else tells what happened (never a secret). */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** The one logger of the gateway: the pipeline and the servers log through it, never `console` directly. */
export interface Logger {
  error(message: string, fields?: LogFields, error?: unknown): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  /** The one line each finished request writes (`msg: "request"`, at `info`): the hot path's only line. */
  request(fields: LogFields): void;
}

export interface LoggerOptions {
  level: LogLevel;
  format: LogFormat;
  /** Values that must never be written (the admin key, vendor keys, the metrics key). */
  secrets: readonly (string | undefined)[];
  /** Where lines go (tests capture them); standard output by default. */
  destination?: DestinationStream;
}

const NO_FIELDS: LogFields = Object.freeze({});

/** An error as log fields: its message and stack, never the object (which may hold a request). */
function errorFields(error: unknown): LogFields {
  if (error instanceof Error) return { err_message: error.message, err_stack: error.stack };
  return { err_message: String(error) };
}

/**
 * JSON lines through pino (`time` as ISO 8601, `level` as its name, `msg`), or pino-pretty's
 * colored lines for a terminal. Every line passes the secret scrubber as the last step before it
 * is written, whatever field or message carried the secret.
 */
export function pinoLogger(opts: LoggerOptions): Logger {
  const scrub = secretScrubber(opts.secrets);
  const options: pino.LoggerOptions = {
    level: opts.level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    hooks: { streamWrite: scrub },
  };
  const destination = destinationFor(opts.format, opts.destination);
  const log = pino(options, destination);
  const info = (message: string, fields?: LogFields) => log.info(fields ?? NO_FIELDS, message);
  return {
    error: (message, fields, error) =>
      log.error(error === undefined ? (fields ?? NO_FIELDS) : { ...fields, ...errorFields(error) }, message),
    warn: (message, fields) => log.warn(fields ?? NO_FIELDS, message),
    info,
    request:
      opts.format !== "json" || !destination
        ? (fields) => info("request", fields)
        : log.isLevelEnabled("info")
          ? requestLine(destination)
          : () => {},
  };
}

/**
 * The request line in pino's own shape (`level`, `time`, the fields, `msg`), serialised in one
 * `JSON.stringify` of its fields. pino builds a line field by field, escaping each string in
 * JavaScript; for the line every request writes that cost several µs of CPU per request under
 * load in the benchmark (bench/README.md). Its fields are Turnpike's own ids, catalog and vendor
 * names and numbers (telemetry/request-log.ts), never a client's text or a header, so the line
 * skips the secret scrubber that every other line passes.
 */
function requestLine(destination: DestinationStream): (fields: LogFields) => void {
  return (fields) => {
    const json = JSON.stringify(fields);
    const rest = json.length > 2 ? `,${json.slice(1, -1)}` : "";
    destination.write(`{"level":"info","time":"${isoNow()}"${rest},"msg":"request"}\n`);
  };
}

let lastMs = 0;
let lastIso = "";

/** The time as ISO 8601, formatted once per millisecond (many requests end within the same one under load). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

let stdout: pino.DestinationStream | undefined;

/** Lines are gathered up to this many characters before one write (a line per request otherwise costs a write each)… */
const BATCH_CHARS = 64 * 1024;
/** …and are written at the latest this long after they were logged, however few. */
const BATCH_MS = 100;

/**
 * Standard output in batches: lines are gathered here and handed to the runtime's writer in one
 * piece per batch, so under load one write carries many requests' lines and a line waits for no
 * write. Handing the writer each line instead cost a request about 6 µs of CPU when standard
 * output is a pipe (as under a process manager or a container): Bun's writer registers the pipe
 * with its event loop again for nearly every write (an `epoll_ctl` each; bench/README.md). A
 * quiet gateway's lines go out within BATCH_MS; all is flushed when the process exits.
 */
function standardOutput(): pino.DestinationStream {
  if (stdout) return stdout;
  const sink = Bun.stdout.writer();
  let lines: string[] = [];
  let pending = 0;
  const flush = () => {
    if (pending === 0) return;
    const batch = lines.join("");
    lines = [];
    pending = 0;
    try {
      sink.write(batch);
      void sink.flush();
    } catch {
      // Standard output is gone (a closed pipe): nothing more can be written anywhere.
    }
  };
  const timer = setInterval(flush, BATCH_MS);
  timer.unref?.();
  process.on("exit", () => {
    clearInterval(timer);
    flush();
  });
  stdout = {
    write(line: string) {
      lines.push(line);
      pending += line.length;
      if (pending >= BATCH_CHARS) flush();
    },
  };
  return stdout;
}

/**
 * pino-pretty as an in-process stream: pino's transports run in a worker thread, which a single
 * log line per request does not need (and which Bun's workers make slower to start).
 */
function destinationFor(format: LogFormat, destination: DestinationStream | undefined): DestinationStream | undefined {
  switch (format) {
    case "json":
      return destination ?? standardOutput();
    case "pretty": {
      // Loaded only when asked for: a JSON-logging gateway never reads the module.
      const { build } = require("pino-pretty") as typeof import("pino-pretty");
      const colorize = destination === undefined && (process.stdout.isTTY ?? false);
      return build({
        colorize,
        singleLine: true,
        translateTime: "SYS:HH:MM:ss.l",
        sync: true,
        ...(destination ? { destination } : {}),
      });
    }
    default: {
      const never: never = format;
      return never;
    }
  }
}
