/** A label value as the pipeline has it: a status stays a number until a child is first made for it. */
export type LabelValue = string | number;

type Node<C> = Map<LabelValue, Node<C> | C>;

/**
 * The children of one metric, kept by their label values in nested maps: after the first request
 * of a label set, finding its child is a few map lookups — no label string is joined or hashed on
 * the hot path (prom-client's `labels()` builds a key string on every call).
 */
export class LabelCache<C> {
  private readonly root: Node<C> = new Map();

  constructor(private readonly make: (values: string[]) => C) {}

  get(...values: LabelValue[]): C {
    let node = this.root;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = node.get(values[i]!) as Node<C> | undefined; // inner levels hold maps
      if (!next) {
        next = new Map();
        node.set(values[i]!, next);
      }
      node = next;
    }
    let child = node.get(values[last]!) as C | undefined; // the last level holds children
    if (child === undefined) {
      child = this.make(values.map(String));
      node.set(values[last]!, child as Node<C> | C);
    }
    return child;
  }
}
