/**
 * The admin API's bodies and replies for teams, users, admin tokens and the audit log, as
 * TypeBox schemas: the routes check bodies against them and the description document is built
 * from them.
 */
import { type Static, Type } from "@sinclair/typebox";
import { Nullable } from "@turnpike/schema";

const Time = Type.String({ format: "date-time" });
const TeamRole = Type.Union([Type.Literal("team-admin"), Type.Literal("member"), Type.Literal("viewer")], {
  rule: "must be team-admin, member or viewer",
});
const OrgRoleWord = Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("viewer")], {
  rule: "must be owner, admin or viewer, or null for the roles of the user's teams only",
});
const AnyRole = Type.Union(
  [
    Type.Literal("owner"),
    Type.Literal("admin"),
    Type.Literal("team-admin"),
    Type.Literal("member"),
    Type.Literal("viewer"),
  ],
  { rule: "must be owner, admin, team-admin, member or viewer" },
);
const Name = Type.String({ minLength: 1, maxLength: 200, rule: "must be a name of 1 to 200 characters" });
const limitField = (max: number) =>
  Nullable(Type.Integer({ minimum: 1, maximum: max, rule: `must be a whole number from 1 to ${max}, or null` }));

const budgetField = Nullable(
  Type.Number({
    exclusiveMinimum: 0,
    maximum: 10_000_000,
    rule: "must be a number of US dollars above 0 and at most 10000000, or null",
  }),
);

/**
 * A team's `key_defaults` (what a key made without a field gets) and `key_ceilings` (the most a
 * key made or changed by anyone but an organisation admin may get): docs/teams.md.
 */
export const KeyRules = Type.Object(
  {
    models: Type.Optional(
      Nullable(Type.Array(Type.String({ minLength: 1 }), { description: "Model ids or `*` globs." })),
    ),
    tools: Type.Optional(
      Nullable(
        Type.Array(Type.String({ minLength: 1 }), {
          description:
            "MCP tools (`<server>__<glob>`, `*`); with no ceiling here nor team `tools`, members' keys get none.",
        }),
      ),
    ),
    rpm: Type.Optional(limitField(1_000_000)),
    tpm: Type.Optional(limitField(10_000_000_000)),
    budget_usd: Type.Optional(budgetField),
    lifetime_days: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: 3650,
          rule: "must be a whole number of days from 1 to 3650, or null",
          description: "The key expires this many days after it is made.",
        }),
      ),
    ),
  },
  { additionalProperties: false, listKnown: true },
);

const TEAM_FIELDS = {
  name: Type.Optional(Name),
  models: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
  rpm: Type.Optional(limitField(1_000_000)),
  tpm: Type.Optional(limitField(10_000_000_000)),
  budget_usd: Type.Optional(budgetField),
  tools: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 })))),
  key_defaults: Type.Optional(Nullable(KeyRules)),
  key_ceilings: Type.Optional(Nullable(KeyRules)),
  guardrails: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1 }), { maxItems: 32 }))),
};
/** `POST /admin/teams` (name required) and `PATCH /admin/teams/{id}`. */
export const AdminTeamFields = Type.Object(TEAM_FIELDS, { additionalProperties: false, listKnown: true });
export type AdminTeamFields = Static<typeof AdminTeamFields>;

export const AdminTeam = Type.Object({
  id: Type.String(),
  name: Type.String(),
  models: Nullable(Type.Array(Type.String())),
  rpm: Nullable(Type.Number()),
  tpm: Nullable(Type.Number()),
  budget_usd: Nullable(Type.Number()),
  /** MCP tools the team's keys may use, on top of each key's own list; null = no restriction of the team's. */
  tools: Type.Optional(Nullable(Type.Array(Type.String()))),
  key_defaults: Type.Optional(Nullable(KeyRules)),
  key_ceilings: Type.Optional(Nullable(KeyRules)),
  /** Guardrail policies every key of the team runs (a key adds its own); null = none of the team's. */
  guardrails: Type.Optional(Nullable(Type.Array(Type.String()))),
  spent_this_month_usd: Type.Optional(Type.Number({ minimum: 0 })),
  created_at: Time,
  updated_at: Time,
});
export const AdminTeamList = Type.Object({ data: Type.Array(AdminTeam) });

export const AdminMember = Type.Object({
  team_id: Type.String(),
  user_id: Type.String(),
  role: TeamRole,
  source: Type.Union([Type.Literal("admin"), Type.Literal("sign-on")], {
    description:
      "Who gave the membership: `admin` (kept until removed) or `sign-on` (removed at the user's next sign-in once the claim no longer maps to the team).",
  }),
  created_at: Time,
});
export const AdminMemberList = Type.Object({ data: Type.Array(AdminMember) });
/** `POST /admin/teams/{id}/members`: adds a user, or changes its role in the team. */
export const AdminMemberBody = Type.Object(
  { user_id: Type.String({ minLength: 1 }), role: TeamRole },
  { additionalProperties: false, listKnown: true },
);
export type AdminMemberBody = Static<typeof AdminMemberBody>;

const OrgRole = Nullable(OrgRoleWord);
export const AdminUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  subject: Nullable(Type.String()),
  role: OrgRole,
  created_at: Time,
  updated_at: Time,
});
export const AdminUserList = Type.Object({ data: Type.Array(AdminUser) });
/** `POST /admin/users` (email required) and `PATCH /admin/users/{id}`. */
export const AdminUserFields = Type.Object(
  {
    email: Type.Optional(
      Type.String({ minLength: 3, maxLength: 320, pattern: "^[^@\\s]+@[^@\\s]+$", rule: "must be an email address" }),
    ),
    name: Type.Optional(Nullable(Name)),
    role: Type.Optional(OrgRole),
  },
  { additionalProperties: false, listKnown: true },
);
export type AdminUserFields = Static<typeof AdminUserFields>;

export const AdminToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  role: AnyRole,
  team_id: Nullable(Type.String()),
  expires_at: Nullable(Time),
  created_by: Type.String(),
  created_at: Time,
  revoked_at: Nullable(Time),
});
export const AdminTokenWithSecret = Type.Composite([AdminToken, Type.Object({ token: Type.String() })]);
export const AdminTokenList = Type.Object({ data: Type.Array(AdminToken) });
/** `POST /admin/tokens`: a team role needs `team_id`; an organisation role takes none. */
export const AdminTokenBody = Type.Object(
  {
    name: Name,
    role: AnyRole,
    team_id: Type.Optional(Type.String({ minLength: 1 })),
    expires_at: Type.Optional(Nullable(Time)),
  },
  { additionalProperties: false, listKnown: true },
);
export type AdminTokenBody = Static<typeof AdminTokenBody>;

export const AdminAuditRecord = Type.Object({
  id: Type.String(),
  at: Time,
  actor: Type.String({ description: "`admin-key`, `token:<id>` or `user:<id>`." }),
  address: Nullable(Type.String()),
  action: Type.String({
    description:
      "`key.create`, `team.update`, `token.revoke`, …; sign-on's `session.create` (signed in), `session.refuse` (a refused sign-in) and `session.end` (signed out).",
  }),
  target: Nullable(Type.String()),
  before: Type.Unknown(),
  after: Type.Unknown(),
});
export const AdminAuditList = Type.Object({
  data: Type.Array(AdminAuditRecord),
  /** Pass as `cursor` for the next (older) page; null on the last. */
  next_cursor: Nullable(Type.String()),
});

export const TEAM_SCHEMAS = {
  KeyRules,
  AdminTeamFields,
  AdminTeam,
  AdminTeamList,
  AdminMember,
  AdminMemberList,
  AdminMemberBody,
  AdminUser,
  AdminUserList,
  AdminUserFields,
  AdminToken,
  AdminTokenWithSecret,
  AdminTokenList,
  AdminTokenBody,
  AdminAuditRecord,
  AdminAuditList,
};
