import rawlist from "@inquirer/rawlist";
import { ApiError, CliError, ExitCode } from "./errors.js";
import type { Io } from "./output.js";

export interface OrgCandidate {
  id: string;
  name: string;
}

export function ambiguousCandidates(e: unknown): OrgCandidate[] | null {
  if (!(e instanceof ApiError) || e.type !== "MULTIPLE_ORGS_AMBIGUOUS") return null;
  const orgs = e.details.organizations;
  return Array.isArray(orgs) ? orgs.filter((o): o is OrgCandidate => typeof o?.id === "string" && typeof o?.name === "string") : [];
}

/** The error for a script: exit 4, naming the flag and every candidate so the caller can pick. */
export function orgChoiceNeeded(candidates: OrgCandidate[]): CliError {
  const list = candidates.map((o) => `${o.id} (${o.name})`).join(", ");
  return new CliError(`You belong to several organizations that can sign: choose one with --org-id: ${list}`, ExitCode.ORG_CHOICE, "MULTIPLE_ORGS_AMBIGUOUS", { organizations: candidates });
}

/**
 * A person at a terminal picks by number; anything else (a pipe, CI, a cron job) gets the error
 * above instead of a prompt that would wait forever. The prompt draws on stderr so that --json
 * output on stdout stays clean.
 */
export async function chooseOrg(io: Io, candidates: OrgCandidate[]): Promise<string> {
  if (!io.interactive || candidates.length === 0) throw orgChoiceNeeded(candidates);
  return rawlist(
    { message: "Sign with which organization?", choices: candidates.map((o) => ({ name: `${o.name}  ${io.err.dim(o.id)}`, short: o.name, value: o.id })) },
    { output: process.stderr },
  );
}

/** Runs `attempt` without an organization, and once more with the one chosen if the server asks. */
export async function withOrgChoice<T>(io: Io, orgId: string | undefined, attempt: (orgId?: string) => Promise<T>): Promise<T> {
  try {
    return await attempt(orgId);
  } catch (e) {
    const candidates = orgId ? null : ambiguousCandidates(e);
    if (!candidates) throw e;
    return attempt(await chooseOrg(io, candidates));
  }
}
