/**
 * A parameter that could not be carried to the chosen upstream (STYLE rule 2). The gateway sends
 * each as an `x-turnpike-warning: <param>: <message>` response header (decisions/0001).
 */
export interface Warning {
  /** The client-side field, e.g. `top_k` or `messages[2].content[0]`. */
  param: string;
  message: string;
}

/** Collects warnings, one per param (a repeated cause is reported once). */
export class Warnings {
  readonly list: Warning[] = [];
  private readonly seen = new Set<string>();

  add(param: string, message: string): void {
    if (this.seen.has(param)) return;
    this.seen.add(param);
    this.list.push({ param, message });
  }
}
