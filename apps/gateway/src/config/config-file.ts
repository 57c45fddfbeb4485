import { readFileSync } from "node:fs";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { isRecord } from "../vocabulary/client-errors";
import { ConfigError } from "../vocabulary/config-error";

/** A line and column, both from 1, as editors count them. */
export interface Position {
  line: number;
  col: number;
}

/** A config file read: its value, and where in the text a path of it is (YAML only). */
export interface ConfigSource {
  value: Record<string, unknown>;
  /** Where `models[0].deployments[1].vendor` is written: its deepest part present in the text. */
  position(path: string): Position | undefined;
}

const SEGMENT = /([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;

/** `models[0].deployments` → `["models", 0, "deployments"]`; the path syntax of the config's messages. */
export function pathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === ".") i++;
    SEGMENT.lastIndex = i;
    const m = SEGMENT.exec(path);
    if (!m) break;
    out.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3]!) as string))); // a JSON string literal
    i = SEGMENT.lastIndex;
  }
  return out;
}

/**
 * Reads a config file: JSON by default, YAML when the name ends in .yaml or .yml (parsed by the
 * `yaml` package, which reports every syntax mistake with its line and column, and refuses a key
 * written twice in one map).
 */
export function readConfigSource(path: string): ConfigSource {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code; // a file system error carries its code
    throw new ConfigError([
      `${path}: the config file (TURNPIKE_CONFIG) cannot be read: ${code === "ENOENT" ? "no such file" : e instanceof Error ? e.message : String(e)}`,
    ]);
  }
  const yaml = /\.ya?ml$/i.test(path);
  if (!yaml) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ConfigError([`${path}: not valid JSON: ${e instanceof Error ? e.message : String(e)}`]);
    }
    return { value: mustBeObject(parsed, path), position: () => undefined };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, merge: true, prettyErrors: true });
  if (doc.errors.length)
    throw new ConfigError(
      doc.errors.map((e) => {
        const at = e.linePos?.[0];
        // The parser's message ends with its own "at line L, column C:" and a snippet of the text: the position leads here.
        const reason = e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
        return at ? `${path}:${at.line}:${at.col}: not valid YAML: ${reason}` : `${path}: not valid YAML: ${reason}`;
      }),
    );
  const value = mustBeObject(doc.toJS(), path);
  return {
    value,
    position(p) {
      let node: unknown = doc.contents;
      let offset: number | undefined = (doc.contents as Node | null)?.range?.[0];
      for (const seg of pathSegments(p)) {
        if (isMap(node)) {
          const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
          if (!pair) break;
          offset = (pair.key as Node).range?.[0] ?? offset; // a scalar key has its range
          node = pair.value;
        } else if (isSeq(node) && typeof seg === "number") {
          const item = node.items[seg] as Node | undefined;
          if (!item) break;
          offset = item.range?.[0] ?? offset;
          node = item;
        } else break;
      }
      return offset === undefined ? undefined : lines.linePos(offset);
    },
  };
}

function mustBeObject(parsed: unknown, path: string): Record<string, unknown> {
  if (!isRecord(parsed))
    throw new ConfigError([
      `${path}: the config file must hold an object with optional "models", "vendors" and "routing"`,
    ]);
  return parsed;
}

/**
 * `file: path: rule` → `file:line:col: path: rule`, where the file says where; other lines as
 * they are (a variable's mistake, a JSON file's).
 */
export function withPositions(problems: readonly string[], file: string, source: ConfigSource): string[] {
  return problems.map((p) => {
    if (!p.startsWith(`${file}: `)) return p;
    const rest = p.slice(file.length + 2);
    const at = source.position(rest.split(": ", 1)[0]!);
    return at ? `${file}:${at.line}:${at.col}: ${rest}` : p;
  });
}
