import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, int, usd } from "../api";

interface Team {
  id: string;
  name: string;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  budget_usd: number | null;
  spent_this_month_usd?: number;
}

const limit = (n: number | null) => (n === null ? "—" : int(n));

/** The teams the signed-in role may see, with their models, limits and this month's spend against the budget. */
export function Teams() {
  const [teams, setTeams] = useState<Team[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ data: Team[] }>("/admin/teams").then(
      (r) => setTeams(r.data),
      (e: Error) => setError(e.message),
    );
  }, []);
  return (
    <section className="card">
      <h2>Teams</h2>
      <Alert error={error} />
      <div className="scroll">
        <table aria-label="Teams">
          <thead>
            <tr>
              <th>Team</th>
              <th>Models</th>
              <th>RPM</th>
              <th>TPM</th>
              <th>Spent this month</th>
              <th>Budget</th>
            </tr>
          </thead>
          <tbody>
            {teams.map((t) => (
              <tr key={t.id} data-team-id={t.id}>
                <td>{t.name}</td>
                <td>{t.models ? t.models.join(", ") : "all"}</td>
                <td>{limit(t.rpm)}</td>
                <td>{limit(t.tpm)}</td>
                <td>{usd(t.spent_this_month_usd ?? 0)}</td>
                <td>{t.budget_usd === null ? "—" : usd(t.budget_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
