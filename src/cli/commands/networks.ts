import type { Ctx } from "../context.js";
import { CliError, ExitCode } from "../errors.js";
import type { Result } from "../output.js";
import { formatDuration } from "../time.js";
import { listOrgs } from "./orgs.js";

interface Membership {
  id: string;
  network_name: string;
  zerotier_network_id: string;
  device_display_name: string;
  state: string;
  approved_for_activation: boolean;
  active_session: { id: string; expires_at: string; minutes_left: number } | null;
}
interface Device {
  id: string;
  display_name: string;
  node_id: string;
  status: string;
}
interface OrgAccess {
  org: { id: string; name: string };
  devices: Device[];
  memberships: Membership[];
}

const O = (orgId: string) => `/organizations/${encodeURIComponent(orgId)}`;

/** One organization named by --org-id, or every one where the user may use networks (guests may not). */
async function gather(ctx: Ctx, orgId?: string, withDevices = true): Promise<OrgAccess[]> {
  const all = await listOrgs(ctx);
  const chosen = orgId ? [all.find((o) => o.id === orgId) ?? { id: orgId, name: orgId, role: "member" }] : all.filter((o) => o.role !== "guest");
  return Promise.all(
    chosen.map(async (org) => ({
      org: { id: org.id, name: org.name },
      devices: withDevices ? (await ctx.api.get<{ devices: Device[] }>(`${O(org.id)}/devices`)).devices : [],
      memberships: (await ctx.api.get<{ memberships: Membership[] }>(`${O(org.id)}/memberships`)).memberships,
    })),
  );
}

const timeLeft = (m: Membership) => (m.active_session ? `active, ${formatDuration(m.active_session.minutes_left * 60_000)} left` : m.approved_for_activation ? "off (can activate)" : m.state.replace(/_/g, " "));

export async function networksList(ctx: Ctx, opts: { orgId?: string }): Promise<Result> {
  const access = await gather(ctx, opts.orgId);
  const c = ctx.io.out;
  const text = access.flatMap(({ org, devices, memberships }) => [
    c.bold(org.name) + c.dim(`  ${org.id}`),
    ...(devices.length ? devices.map((d) => `  device  ${d.display_name}  ${c.dim(d.node_id)}  ${d.status}`) : ["  no devices"]),
    ...(memberships.length
      ? memberships.map((m) => `  access  ${m.network_name} on ${m.device_display_name}: ${m.active_session ? c.green(timeLeft(m)) : timeLeft(m)}  ${c.dim(m.id)}`)
      : ["  no network access"]),
  ]);
  return { json: { organizations: access }, text: text.length ? text : ["No organizations with network access"] };
}

/** A membership by id, network name or ZeroTier network id, across the organizations searched. */
function pick(access: OrgAccess[], ref: string): { orgId: string; m: Membership } {
  const want = ref.toLowerCase();
  const hits = access.flatMap(({ org, memberships }) =>
    memberships.filter((m) => m.id === ref || m.network_name.toLowerCase() === want || m.zerotier_network_id === want).map((m) => ({ orgId: org.id, m })),
  );
  if (hits.length === 1) return hits[0]!;
  if (!hits.length) throw new CliError(`No network access matches ${ref} (see \`keyward networks\`)`, ExitCode.ERROR, "MEMBERSHIP_NOT_FOUND");
  throw new CliError(`${ref} matches several devices: name one by id: ${hits.map((h) => `${h.m.id} (${h.m.device_display_name})`).join(", ")}`, ExitCode.USAGE, "AMBIGUOUS");
}

interface Session {
  expires_at: string;
  minutes_left: number;
}

interface ActivationOptions {
  orgId?: string;
  all?: boolean;
  minutes?: number;
}

function targets(access: OrgAccess[], refs: string[], all: boolean | undefined, keep: (m: Membership) => boolean = () => true) {
  if (!refs.length && !all) throw new CliError("Name a network (or membership id), or pass --all", ExitCode.USAGE, "USAGE");
  return all ? access.flatMap(({ org, memberships }) => memberships.filter(keep).map((m) => ({ orgId: org.id, m }))) : refs.map((r) => pick(access, r));
}

const row = (m: Membership) => ({ membership_id: m.id, network: m.network_name, device: m.device_display_name });

export async function networksActivate(ctx: Ctx, refs: string[], opts: ActivationOptions): Promise<Result> {
  const access = await gather(ctx, opts.orgId, false);
  const body = opts.minutes ? { lifetime_minutes: opts.minutes } : {};
  const done: Array<ReturnType<typeof row> & { activated: true; expires_at: string; minutes_left: number }> = [];
  const record = (m: Membership, s: Session) => done.push({ ...row(m), activated: true, expires_at: s.expires_at, minutes_left: s.minutes_left });
  if (opts.all && !refs.length) {
    // One call per organization: the server switches on every approved device membership at once.
    for (const { org, memberships } of access.filter((a) => a.memberships.some((m) => m.approved_for_activation))) {
      const res = await ctx.api.post<{ sessions: Array<Session & { device_network_membership_id: string }> }>(`${O(org.id)}/memberships/activate-all`, body);
      for (const s of res.sessions) {
        const m = memberships.find((x) => x.id === s.device_network_membership_id);
        if (m) record(m, s);
      }
    }
  } else {
    for (const { orgId, m } of targets(access, refs, false)) {
      record(m, (await ctx.api.post<{ session: Session }>(`${O(orgId)}/memberships/${m.id}/activate`, body)).session);
    }
  }
  const c = ctx.io.out;
  return {
    json: { activations: done, count: done.length },
    text: done.length ? done.map((d) => `${c.green("✓")} ${d.network} on ${d.device}: active for ${formatDuration(d.minutes_left * 60_000)}`) : ["Nothing to activate"],
  };
}

export async function networksDeactivate(ctx: Ctx, refs: string[], opts: ActivationOptions): Promise<Result> {
  const access = await gather(ctx, opts.orgId, false);
  const done = [];
  for (const { orgId, m } of targets(access, refs, opts.all, (x) => x.active_session !== null)) {
    await ctx.api.post(`${O(orgId)}/memberships/${m.id}/deactivate`);
    done.push({ ...row(m), deactivated: true });
  }
  return {
    json: { deactivations: done, count: done.length },
    text: done.length ? done.map((d) => `${ctx.io.out.green("✓")} ${d.network} on ${d.device}: switched off`) : ["Nothing was active"],
  };
}
