import type { UsageTotals } from "./usage.js";

/**
 * `Transformer.cancel` (Streams spec, 2023) runs when the reader cancels — a client that goes
 * away. Bun 1.4 calls it; TypeScript's DOM lib does not declare it yet, hence this type.
 */
export type CancellableTransformer<I, O> = Transformer<I, O> & { cancel?: (reason: unknown) => void };

/** A state machine that turns one upstream's events into messages-format events. */
export interface EventMachine<I> {
  push(input: I): void;
  /** The upstream ended. */
  end(): void;
  /** The reader went away. */
  cancel(): void;
  usage(): UsageTotals;
}

/**
 * A TransformStream driven by one {@link EventMachine}, exposing its usage at any time: the
 * shared shape of the upstream → messages-event translators.
 */
export class MachineStream<I, O, M extends EventMachine<I>> extends TransformStream<I, O> {
  readonly #machine: M;

  constructor(make: (emit: (out: O) => void) => M) {
    let machine!: M;
    const transformer: CancellableTransformer<I, O> = {
      start(controller) {
        machine = make((out) => controller.enqueue(out));
      },
      transform(input) {
        machine.push(input);
      },
      flush() {
        machine.end();
      },
      cancel() {
        machine.cancel();
      },
    };
    super(transformer);
    this.#machine = machine;
  }

  /** Usage so far: the upstream's numbers, or a local estimate (`estimated: true`). */
  get usage(): UsageTotals {
    return this.#machine.usage();
  }
}
