import { useCallback, useEffect, useState } from "react";
import { allPages, api, ApiError, type Key, session, signOnEnd, signOnState } from "./api";
import { SignIn } from "./sign-in";
import { Health } from "./views/health";
import { Keys } from "./views/keys";
import { Live } from "./views/live";
import { Models } from "./views/models";
import { Overview } from "./views/overview";
import { Usage } from "./views/usage";
import { Teams } from "./views/teams";
import { Audit } from "./views/audit";
import { Guardrails } from "./views/guardrails";

const VIEWS = {
  overview: "Overview",
  keys: "Keys",
  usage: "Usage",
  live: "Live log",
  guardrails: "Guardrails",
  teams: "Teams",
  audit: "Audit",
  models: "Models",
  health: "Health",
} as const;
type View = keyof typeof VIEWS;

/** The signed-in shell: one view at a time, picked from the top bar (it wraps on a phone). */
export function App() {
  const [signedIn, setSignedIn] = useState(session.get() !== null || session.csrf() !== null);
  // Whether the gateway offers single sign-on (and whether this browser already signed in through it).
  const [signOn, setSignOn] = useState(false);
  const [view, setView] = useState<View>("keys");
  const [keys, setKeys] = useState<Key[]>([]);
  // The health view is offered only where the gateway reports deployments (404 elsewhere).
  const [hasDeployments, setHasDeployments] = useState(false);
  // The audit view is offered only to roles that may read the log (a member may not).
  const [readsAudit, setReadsAudit] = useState(false);

  const signOut = useCallback(() => {
    void signOnEnd();
    session.clear();
    setSignedIn(false);
  }, []);
  useEffect(() => {
    if (session.get() !== null) return;
    void signOnState().then((state) => {
      setSignOn(state !== "off");
      if (state === "ok") setSignedIn(true);
    });
  }, []);
  const reloadKeys = useCallback(async () => {
    try {
      setKeys(await allPages<Key>("/admin/keys?limit=1000"));
    } catch (e) {
      // A key changed on the server (or a new gateway run) ends the session.
      if (e instanceof ApiError && e.status === 401) signOut();
    }
  }, [signOut]);

  useEffect(() => {
    if (!signedIn) return;
    void reloadKeys();
    api("/admin/deployments").then(
      () => setHasDeployments(true),
      () => setHasDeployments(false),
    );
    api("/admin/audit?limit=1").then(
      () => setReadsAudit(true),
      () => setReadsAudit(false),
    );
  }, [signedIn, reloadKeys]);

  if (!signedIn) return <SignIn signOn={signOn} onSignedIn={() => setSignedIn(true)} />;
  const names = new Map(keys.map((k) => [k.id, k.name]));
  return (
    <div className="shell">
      <header className="bar">
        <strong className="brand">Turnpike</strong>
        <nav aria-label="Views">
          {(Object.keys(VIEWS) as View[])
            .filter((v) => (v !== "health" || hasDeployments) && (v !== "audit" || readsAudit))
            .map((v) => (
              <button
                key={v}
                type="button"
                className={v === view ? "tab active" : "tab"}
                aria-current={v === view ? "page" : undefined}
                onClick={() => setView(v)}
              >
                {VIEWS[v]}
              </button>
            ))}
        </nav>
        <button type="button" className="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {view === "overview" && <Overview keys={keys} />}
        {view === "keys" && <Keys keys={keys} reload={reloadKeys} />}
        {view === "usage" && <Usage names={names} />}
        {view === "live" && <Live names={names} />}
        {view === "guardrails" && <Guardrails names={names} />}
        {view === "teams" && <Teams />}
        {view === "audit" && <Audit />}
        {view === "models" && <Models />}
        {view === "health" && <Health />}
      </main>
    </div>
  );
}
