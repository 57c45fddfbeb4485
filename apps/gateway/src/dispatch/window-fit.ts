import type { Plan } from "./plan";
import type { Route } from "./deployments";
import type { AttemptsDeps } from "./attempt-rules";

/**
 * Whether the prompt fits a model's window. Tokens are at most bytes: only a body larger than a
 * window is counted, and only once; after an overflow every candidate is measured.
 */
export class WindowFit {
  private tokens: number | undefined;
  overflow = false;

  constructor(
    private readonly deps: Pick<AttemptsDeps, "catalog">,
    private readonly size: number,
  ) {}

  /** A body smaller than the window fits at once (no promise); a larger one is counted, once. */
  fits(route: Route, p: Plan | undefined): boolean | Promise<boolean> {
    const window = this.window(route);
    if (!this.overflow && this.size < window) return true;
    if (this.tokens !== undefined || !p) {
      this.tokens ??= Math.ceil(this.size / 4);
      return this.tokens <= window;
    }
    return p.countPromptInSteps().then((tokens) => {
      this.tokens ??= tokens;
      return this.tokens <= window;
    });
  }

  /** The upstream said the prompt is over its window: only a larger window can take it. */
  overflowed(route: Route, p: Plan): void {
    this.tokens = Math.max(
      this.tokens ?? 0,
      p.countPrompt(),
      (this.deps.catalog.get(route.model)?.context_window ?? 0) + 1,
    );
    this.overflow = true;
  }

  private window(route: Route): number {
    return this.deps.catalog.get(route.model)?.context_window ?? Number.POSITIVE_INFINITY;
  }
}
