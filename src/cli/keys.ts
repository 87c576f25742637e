/**
 * `cursor-bridge keys create|list|show|update|revoke|rotate`: the team gateway's virtual keys, in the store `serve`
 * uses (the same `--store`, `--data-dir` and `--config-dir`). A running server sees a change within half a second.
 * Each create, update, rotate and revoke is written to the audit log.
 */
import type { IssuedKey, KeyView } from "../gateway/index.js";
import { ProxyError } from "../util/errors.js";
import { requireAccount } from "./accounts.js";
import { COMMON_OPTIONS_HELP, type OptionSpec, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { type CliContext, createCliContext } from "./context.js";
import { type GatewayCli, openGatewayCli } from "./gateway-context.js";
import { type CliIo, formatFields, formatTable } from "./io.js";

const HELP = `Usage: cursor-bridge keys <command> [NAME|ID] [options]

Virtual keys for a team (one per person or tool): each key may carry limits, a model list, a Cursor account and an
expiry. A key is shown once, when it is created or rotated; only its SHA-256 is stored. Once any key exists, every
API request needs one (the --api-key, if set, stays valid as the operator's own key). A running server picks up
changes within half a second.

Commands:
  create --name NAME [options]  Make a key and print it (once)
  list                          Every key: name, id, first characters, status, limits
  show NAME|ID                  One key
  update NAME|ID [options]      Change a key's budget, rpm, tpm, max-parallel, models, account or expiry in place
                                (the key itself stays the same; none clears a setting, e.g. --budget none)
  revoke NAME|ID                Stop a key at once (its record stays, for the audit trail)
  rotate NAME|ID                Replace a key with a new one (same name, id and settings)

Options of create:
  --name NAME                   Unique among keys not revoked (letters, digits, . _ - @)
  --budget USD/PERIOD           Spending limit per day, week or month, e.g. 10/month or 2.50/day
  --rpm N                       Requests per minute
  --tpm N                       Tokens (input + output) per minute
  --max-parallel N              Requests running at once
  --models GLOB,...             Models the key may use (* any characters, ? one), e.g. gpt-5*,claude-4.5-sonnet
  --account ACCOUNT             Named Cursor account its requests run on (default: the default account)
  --expires DURATION            Lifetime: a number and m, h, d or w, e.g. 12h, 30d, 2w (from now, for update)

Options of update: the options of create but --name.

Store options (the same as serve's):
  --store file|redis://…        Where keys live: keys.json in the data directory, or a Redis store
  --data-dir <dir>              The data directory (file store)

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge keys create --name alice --budget 20/month --rpm 30 --models 'gpt-5*,claude-*'
  cursor-bridge keys list
  cursor-bridge keys update alice --rpm 60 --budget 50/month
  cursor-bridge keys rotate alice --json | jq -r .key
  cursor-bridge keys revoke alice
`;

const CREATE_OPTIONS: OptionSpec = {
  name: { type: "string" },
  budget: { type: "string" },
  rpm: { type: "string" },
  tpm: { type: "string" },
  "max-parallel": { type: "string" },
  models: { type: "string" },
  account: { type: "string" },
  expires: { type: "string" },
};

const { name: _name, ...UPDATE_OPTIONS } = CREATE_OPTIONS;

const SUBCOMMANDS = ["create", "list", "show", "update", "revoke", "rotate"] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

function usage(message: string): ProxyError {
  return new ProxyError("invalid_request", `${message} Run \`cursor-bridge keys --help\` for the commands.`);
}

function limitsText(view: KeyView): string {
  const { rpm, tpm, maxParallel, budget } = view.limits;
  const parts = [
    budget === undefined ? undefined : `$${budget.usd}/${budget.period}`,
    rpm === undefined ? undefined : `${rpm} rpm`,
    tpm === undefined ? undefined : `${tpm} tpm`,
    maxParallel === undefined ? undefined : `${maxParallel} parallel`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? "none" : parts.join(", ");
}

function fieldsOf(view: KeyView): [string, string][] {
  const fields: [string, string][] = [
    ["Name", view.name],
    ["Id", view.id],
    ["Key", `${view.prefix}…`],
    ["Status", view.status],
    ["Created", view.createdAt],
  ];
  if (view.rotatedAt !== null) fields.push(["Rotated", view.rotatedAt]);
  if (view.updatedAt !== null) fields.push(["Updated", view.updatedAt]);
  if (view.expiresAt !== null) fields.push(["Expires", view.expiresAt]);
  if (view.revokedAt !== null) fields.push(["Revoked", view.revokedAt]);
  fields.push(["Limits", limitsText(view)]);
  fields.push(["Models", view.models === null ? "all" : view.models.join(", ")]);
  fields.push(["Account", view.account ?? "default"]);
  return fields;
}

function printIssued(ctx: CliContext, verb: string, issued: IssuedKey, location: string): void {
  if (ctx.json) {
    ctx.printJson({ key: issued.key, ...issued.view, location });
    return;
  }
  const { style } = ctx;
  ctx.io.out(`${verb} key "${issued.view.name}" (${issued.view.id}):\n\n  ${style.bold(issued.key)}\n\n`);
  ctx.io.out(formatFields([...fieldsOf(issued.view).slice(3), ["Store", location]]));
  ctx.io.out(
    `\n${style.yellow("This is the only time the key is shown:")} cursor-bridge keeps only its hash, in the store ` +
      "above; a `serve` on the same store (same --store and --data-dir) accepts the key.\n",
  );
}

async function runSubcommand(
  sub: Subcommand,
  ref: string | undefined,
  values: Record<string, unknown>,
  ctx: CliContext,
  gateway: GatewayCli,
) {
  const { service, actor } = gateway;
  const need = (): string => {
    if (ref === undefined) throw usage(`\`keys ${sub}\` needs the key's NAME or ID.`);
    return ref;
  };
  const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  /** The key's settings given as options (create and update take the same ones). */
  const settings = () => ({
    budget: text("budget"),
    rpm: text("rpm"),
    tpm: text("tpm"),
    maxParallel: text("max-parallel"),
    models: text("models"),
    account: text("account"),
    expires: text("expires"),
  });
  switch (sub) {
    case "create": {
      const name = text("name");
      if (name === undefined) throw usage("`keys create` needs --name NAME.");
      // A key's turns run on its account and no other: bind it only to an account with a login (issue #29).
      const account = text("account");
      if (account !== undefined) await requireAccount(ctx, account.trim());
      const issued = await service.create({ name, ...settings() }, actor);
      printIssued(ctx, "Created", issued, gateway.keys.location);
      return;
    }
    case "list": {
      const views = await service.list();
      if (ctx.json) ctx.printJson({ keys: views, location: gateway.keys.location });
      else if (views.length === 0) {
        ctx.io.out(
          `No keys yet (${gateway.keys.location}). Create one with \`cursor-bridge keys create --name NAME\`.\n`,
        );
      } else {
        const rows = views.map((v) => [
          v.name,
          v.id,
          `${v.prefix}…`,
          v.status,
          v.createdAt.slice(0, 10),
          v.expiresAt?.slice(0, 16) ?? "-",
          limitsText(v),
          v.models?.join(",") ?? "all",
        ]);
        ctx.io.out(formatTable(["NAME", "ID", "KEY", "STATUS", "CREATED", "EXPIRES", "LIMITS", "MODELS"], rows));
      }
      return;
    }
    case "show": {
      const view = await service.show(need());
      if (ctx.json) ctx.printJson(view);
      else ctx.io.out(formatFields(fieldsOf(view)));
      return;
    }
    case "update": {
      const changes = settings();
      if (Object.values(changes).every((value) => value === undefined)) {
        throw usage("`keys update` needs at least one setting, e.g. --rpm 60 or --budget 50/month.");
      }
      const account = changes.account?.trim();
      if (account !== undefined && !/^(none|null|off)$/i.test(account)) await requireAccount(ctx, account);
      const view = await service.update(need(), changes, actor);
      if (ctx.json) ctx.printJson(view);
      else {
        ctx.io.out(`Updated key "${view.name}" (${view.id}); a running server applies it within half a second.\n\n`);
        ctx.io.out(formatFields(fieldsOf(view).slice(3)));
      }
      return;
    }
    case "revoke": {
      const view = await service.revoke(need(), actor);
      if (ctx.json) ctx.printJson(view);
      else ctx.io.out(`Revoked key "${view.name}" (${view.id}); a running server refuses it within half a second.\n`);
      return;
    }
    case "rotate":
      printIssued(ctx, "Rotated", await service.rotate(need(), actor), gateway.keys.location);
      return;
  }
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  const sub = SUBCOMMANDS.find((name) => name === first);
  if (sub === undefined) {
    throw usage(
      first === undefined || first.startsWith("-")
        ? "Name a command: create, list, show, update, revoke or rotate."
        : `Unknown keys command "${first.slice(0, 20)}".`,
    );
  }
  const takesRef = sub === "show" || sub === "update" || sub === "revoke" || sub === "rotate";
  const ref = takesRef && rest[0] !== undefined && !rest[0].startsWith("-") ? rest[0] : undefined;
  const { flags, values } = parseCommandLine(
    `keys ${sub}`,
    ref === undefined ? rest : rest.slice(1),
    sub === "create" ? CREATE_OPTIONS : sub === "update" ? UPDATE_OPTIONS : {},
  );
  const ctx = await createCliContext(io, flags);
  const gateway = await openGatewayCli(ctx);
  try {
    await runSubcommand(sub, ref, values, ctx, gateway);
  } finally {
    await gateway.close();
  }
  return EXIT.ok;
}

/** `cursor-bridge keys`. */
export const keysCommand: Command = {
  name: "keys",
  summary: "Manage the team gateway's virtual keys (create, list, show, update, revoke, rotate)",
  help: HELP,
  options: CREATE_OPTIONS,
  run,
};
