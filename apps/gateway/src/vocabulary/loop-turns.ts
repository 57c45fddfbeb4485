/**
 * Giving the event loop back in the middle of one request's long work (issue 27: no request may
 * hold the server's thread for more than about 100 ms). A large body's steps — parse and check,
 * translation, the count, the upstream body — are each linear in its values and bounded by
 * `TURNPIKE_MAX_BODY_VALUES`, but one after another they held the loop for 0.1–0.3 s; with a turn
 * of the loop between them, the other requests' I/O and timers run in between. Work over many
 * items (a batch's lines) is cut into slices of a few milliseconds the same way.
 */

/**
 * A body longer than this (characters) is large: its steps are separated by turns of the loop,
 * `if (size > LARGE_BODY_CHARS) await loopTurn();`, so that a small body's request suspends nowhere
 * (each promise awaited is a few cells more per request for the collector: bench/README.md).
 */
export const LARGE_BODY_CHARS = 64 * 1024;

/** How long one slice of work over many items may run before it gives the loop a turn. */
export const SLICE_MS = 8;

/** Turns given so far by this process (read by tests: the work was cut, not run whole). */
export const loopTurns = { given: 0 };

/** Lets the event loop run (other requests' I/O and timers) before the caller goes on. */
export function loopTurn(): Promise<void> {
  loopTurns.given++;
  return new Promise((resolve) => setImmediate(resolve));
}

/** Long work over many items: `await slicer.pause()` after each item gives the loop a turn once a slice has run its time. */
export class Slicer {
  private since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  async pause(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await loopTurn();
    this.since = performance.now();
  }
}
