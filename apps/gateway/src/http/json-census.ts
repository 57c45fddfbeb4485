/**
 * The census of a large request body, taken on a worker thread (decisions/0017-json-census.md).
 *
 * What a request costs the event loop grows with the number of JSON values in its body, not
 * with its bytes: a 32 MiB image in one string parses in 20 ms, while 32 MiB of two-word turns
 * (two million values) takes the parse, the depth walk, the schema check, the translation and
 * the upstream body's serialisation about half a second each. So a body large enough to hold
 * more values than the limit is first counted by a worker (one pass over its characters, nothing built), and the server's own
 * thread parses it only when it holds at most `maxValues`; a body that could not hold more
 * (fewer than two characters a value) skips the worker, so the common small request pays nothing.
 *
 * One worker, started at the first large body and kept (unreferenced, so it never keeps the
 * process up); it takes bodies one at a time, so large bodies wait for each other there and
 * never for the event loop.
 */

export interface CensusAsk {
  id: number;
  text: string;
  maxDepth: number;
}

export interface CensusAnswer {
  id: number;
  /** JSON values in the body, the root included. */
  values: number;
  /** The 400 of a body nested deeper than `maxDepth` (checkDepth's message and field). */
  tooDeep?: { message: string; param?: string };
  /** JSON.parse's complaint, for a body that is not JSON. */
  notJson?: string;
}

let worker: Worker | undefined;
let nextId = 1;
const waiting = new Map<number, { resolve: (a: CensusAnswer) => void; reject: (e: Error) => void }>();

function census(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL("./json-census-worker.ts", import.meta.url).href);
  (w as Worker & { unref(): void }).unref(); // Bun's Worker has it; the DOM type does not
  w.onmessage = (event: MessageEvent<CensusAnswer>) => {
    const ask = waiting.get(event.data.id);
    waiting.delete(event.data.id);
    ask?.resolve(event.data);
  };
  w.onerror = (event: ErrorEvent) => {
    // A worker that failed answers nothing more: every body it held is refused, and the next starts a new one.
    const error = new Error(`the JSON census worker failed: ${event.message}`);
    for (const ask of waiting.values()) ask.reject(error);
    waiting.clear();
    if (worker === w) worker = undefined;
    w.terminate();
  };
  worker = w;
  return w;
}

/** Whether `text` is long enough that it might hold more than `maxValues` values (each takes two characters or more). */
export function mightExceed(text: string, maxValues: number): boolean {
  return text.length > 2 * maxValues;
}

/** The worker's census of `text`: its value count, or why it is not acceptable JSON. */
export function takeCensusOffThread(text: string, maxDepth: number): Promise<CensusAnswer> {
  const id = nextId++;
  const ask: CensusAsk = { id, text, maxDepth };
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    census().postMessage(ask);
  });
}
