import type { Route } from "./deployments";
import type { AttemptRun } from "./attempt-run";
import type { Dispatched } from "./attempt-rules";

/**
 * The chain of a route compiled to one direct attempt (deployments.ts `Route.direct`: one
 * deployment, no fallback). What the planned loop (attempts.ts `dispatch`) would do for such a
 * route, without what only a choice needs: no session or its place (there is nowhere to move),
 * no window count (with no fallback the prompt goes to the model whatever its count), no list
 * of the deployments tried, no fallback search. Its circuit is kept as the loop keeps it — taken,
 * told each success and failure, released (`AttemptRun.step`, which both chains share) — and so
 * are `routing.retries` (the same deployment again, after its retry-after) and, when its circuit
 * is open, the one attempt made anyway rather than the client refused.
 */
export async function dispatchDirect(run: AttemptRun, route: Route): Promise<Dispatched> {
  const { deps, size } = run;
  const router = deps.router;
  const retries = router.settings.retries;
  // First its circuit as it stands; then, if it was open and nothing was tried, regardless of it.
  for (let anyState = false; ; anyState = true) {
    let failed = false;
    let retried = 0;
    for (;;) {
      const now = deps.now();
      // After a failure, the same deployment again only while retries remain.
      const again = failed && retried < retries;
      const d =
        !failed || again ? router.pick(route, now, Math.ceil(size / 4), undefined, undefined, anyState) : undefined;
      if (!d) {
        run.noneOn(route, now);
        break;
      }
      if (again) retried++;
      // No session turn and no window: an answer, or a failure not worth another attempt (a
      // prompt over the window included: there is no fallback to take it), is the client's.
      const r = await run.step(d, route, again, undefined, undefined);
      if (r === "failed") {
        failed = true;
        continue;
      }
      if (r === "next") break;
      return r === "done" ? run.end() : r;
    }
    if (run.last || anyState) break;
  }
  return run.end();
}
