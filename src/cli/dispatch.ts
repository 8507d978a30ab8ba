import { login, logout, whoami } from "./commands/auth.js";
import { hostEnroll, hostInstallTimer, hostRenew } from "./commands/host.js";
import { keysAdd, keysList, keysRemove } from "./commands/keys.js";
import { networksActivate, networksDeactivate, networksList } from "./commands/networks.js";
import { orgs } from "./commands/orgs.js";
import { requestDepartment, requestList, requestPrincipal, requestRole } from "./commands/requests.js";
import { sign, status } from "./commands/ssh.js";
import { ensure, sshConfig } from "./commands/ssh-config.js";
import { createCtx, type Ctx } from "./context.js";
import type { Io, Result } from "./output.js";
import type { CommandName, Opts } from "./program.js";

type Handler = (ctx: Ctx, args: unknown[], opts: Opts) => Promise<Result>;

/** Commands that talk to a server, by name. */
const handlers: Record<Exclude<CommandName, "ssh status" | "ssh ensure" | `host ${string}`>, Handler> = {
  login: (ctx, _a, o) => login(ctx, o),
  logout: (ctx) => logout(ctx),
  whoami: (ctx) => whoami(ctx),
  orgs: (ctx) => orgs(ctx),
  "keys add": (ctx, [path], o) => keysAdd(ctx, path as string | undefined, o),
  "keys list": (ctx) => keysList(ctx),
  "keys rm": (ctx, [ref]) => keysRemove(ctx, ref as string),
  "ssh sign": (ctx, _a, o) => sign(ctx, o),
  "ssh config": (ctx, _a, o) => sshConfig(ctx, o),
  "networks list": (ctx, _a, o) => networksList(ctx, o),
  "networks activate": (ctx, [refs], o) => networksActivate(ctx, (refs as string[]) ?? [], o),
  "networks deactivate": (ctx, [refs], o) => networksDeactivate(ctx, (refs as string[]) ?? [], o),
  "request principal": (ctx, [name], o) => requestPrincipal(ctx, name as string, { orgId: o.orgId, for: o.for, reason: o.reason }),
  "request department": (ctx, [name], o) => requestDepartment(ctx, name as string, { orgId: o.orgId, for: o.for, reason: o.reason }),
  "request role": (ctx, [role], o) => requestRole(ctx, role as string, { orgId: o.orgId, for: o.for, reason: o.reason }),
  "request list": (ctx) => requestList(ctx),
};

export async function dispatch(command: CommandName, args: unknown[], opts: Opts, io: Io): Promise<Result> {
  // Reading certificates on disk needs no server and no sign-in.
  if (command === "ssh status") return status(io, (args[0] as string[]) ?? [], process.env);
  // Run by ssh before each connection: a valid certificate needs no server, so no session is opened.
  if (command === "ssh ensure") return ensure(io, opts as { orgId: string }, () => createCtx(io, opts));
  // A server's own commands: no person's sign-in (the enrollment token or the host key is the proof).
  if (command === "host enroll") return hostEnroll(io, opts, process.env);
  if (command === "host renew") return hostRenew(io, opts);
  if (command === "host install-timer") return hostInstallTimer(opts);
  return handlers[command](createCtx(io, opts), args, opts);
}
