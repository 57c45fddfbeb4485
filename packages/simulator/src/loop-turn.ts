/**
 * The simulator may share its process with the gateway (no vendor keys set): a large request's
 * work, or a batch's thousands of lines, gives the event loop turns so that the gateway's other
 * clients are answered in between (issue 27: no request holds the loop more than ~100 ms).
 */

/** A body longer than this (characters) is large: its steps are separated by turns of the loop. */
export const LARGE_BODY_CHARS = 64 * 1024;

/** Lets the event loop run (other requests' I/O and timers) before the caller goes on. */
export function loopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Work over many items: `await slicer.pause()` after each gives the loop a turn once `sliceMs` has run. */
export class Slicer {
  private since = performance.now();

  constructor(private readonly sliceMs = 8) {}

  async pause(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await loopTurn();
    this.since = performance.now();
  }
}
