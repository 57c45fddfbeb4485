import { writeFileSync } from "node:fs";
import type { Logger } from "../log/logger";

/** The secrets a start may have to hand over once: neither is stored anywhere it could be read again. */
export interface OnceSecrets {
  /** The API key made on a first start with an empty store. */
  firstKey: { id: string; secret: string } | undefined;
  /** The admin key generated because `TURNPIKE_ADMIN_KEY` was unset. */
  generatedAdminKey: string | undefined;
}

export interface ShowOnceOptions {
  logger: Logger;
  /** The terminal to print secrets on: standard output or error when either is one, else none. */
  terminal: { write(text: string): unknown } | undefined;
  /** `TURNPIKE_FIRST_KEY_FILE`: where the first key's secret is written (mode 0600), for scripts and tests. */
  firstKeyFile: string | undefined;
}

/** The terminal a person started the gateway in, if any: a pipe or a file is a log, never a terminal. */
export function terminalOf(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): NodeJS.WriteStream | undefined {
  return streams.find((s) => s.isTTY === true);
}

/**
 * Hands over the secrets a start makes. A secret is printed only on a terminal (a person is
 * reading; nothing keeps it) and never goes into a log line: under `docker logs`, a journal or a
 * log collector it would stay readable for as long as the logs are kept. Every case also writes a
 * JSON log line that names the key and says where its secret went, or how to get one.
 */
export function showOnce(s: OnceSecrets, opts: ShowOnceOptions): void {
  const { logger, terminal } = opts;
  if (s.generatedAdminKey) {
    if (terminal)
      terminal.write(`Admin key for this run (set TURNPIKE_ADMIN_KEY to choose your own): ${s.generatedAdminKey}\n`);
    logger.info(
      terminal
        ? "Admin key generated for this run: shown on the terminal, not logged (set TURNPIKE_ADMIN_KEY to choose your own)"
        : "Admin key generated for this run and not shown (no terminal; it is never logged): set TURNPIKE_ADMIN_KEY to use the admin API and the dashboard",
      { admin_key: terminal ? "shown on the terminal" : "not shown" },
    );
  }
  if (!s.firstKey) return;
  const { id, secret } = s.firstKey;
  const where: string[] = [];
  if (opts.firstKeyFile) {
    writeFileSync(opts.firstKeyFile, `${secret}\n`, { mode: 0o600 });
    where.push(`written to ${opts.firstKeyFile}`);
  }
  if (terminal) {
    terminal.write(`First start: created API key "${id}" — it is shown only now:\n  ${secret}\n`);
    where.push("shown on the terminal");
  }
  const how = where.length
    ? `its secret was ${where.join(" and ")}, never logged`
    : "its secret is not shown (no terminal; it is never logged): create a key you can read with `turnpike keys create --name NAME`, POST /admin/keys or the dashboard, or set TURNPIKE_FIRST_KEY_FILE before a first start";
  logger.info(`First start: created API key "${id}"; ${how}`, { key_id: id });
}
