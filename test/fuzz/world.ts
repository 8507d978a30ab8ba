import { randomBytes } from "node:crypto";
import fc from "fast-check";
import type { TestApp } from "../helpers/app.js";
import { addManagedMember, addMember, invite, newOrg } from "../factories/orgs.js";
import { registerClient } from "../factories/oidc.js";
import { addVerifiedKey, createCa, grantPrincipal, makeKey, type LocalKey } from "../factories/ssh.js";
import { newSuperadmin, uniqueEmail, type TestUser } from "../factories/users.js";
import { CENTRAL_NETWORK, CENTRAL_TOKEN } from "./config.js";

/**
 * A reference to one of the world's ids, chosen when a request is generated and resolved when it
 * is sent (the world may be rebuilt in between: a fuzzed DELETE can remove the organization).
 */
export class Ref {
  constructor(
    readonly kind: string,
    readonly index: number,
  ) {}
  toString() {
    return `<${this.kind}#${this.index}>`;
  }
  [fc.toStringMethod]() {
    return this.toString();
  }
}

/** The id kinds, named as the OpenAPI path parameters name them. */
export const ID_KINDS = ["orgId", "userId", "caId", "certId", "clientId", "deptId", "inviteId", "keyId", "principalId", "sessionId", "token", "emailId", "provider", "method", "membershipId", "networkId", "deviceId", "approvalId", "eventId", "credentialId"];

/**
 * The signed-in caller and what it can reach: a superadmin who owns an organization with a user
 * CA, a managed member, a department and a principal, an API key, an OIDC client, a pending
 * invitation, a verified SSH key with a certificate. Authorized requests get past authentication
 * and tenancy, so the fuzzed values reach the services' validation and rules.
 */
export class World {
  caller!: TestUser;
  token = "";
  ids: Record<string, string[]> = {};

  constructor(private readonly app: TestApp) {}

  /** Why the world was last rebuilt (for the run's summary). */
  readonly rebuilt: string[] = [];

  async build(): Promise<void> {
    this.caller = await newSuperadmin(this.app);
    this.token = this.caller.token;
    this.localKey = makeKey();
    this.sshKey = (await addVerifiedKey(this.app, this.caller, this.localKey)).id;
    await this.buildOrg();
  }

  private sshKey = "";
  private member: TestUser | null = null;
  private localKey!: LocalKey;

  /** The organization and everything in it; a fuzzed request may delete any of it. */
  private async buildOrg(): Promise<void> {
    const { app } = this;
    const owner = { ...this.caller, token: this.token };
    // Fuzzed requests create organizations too: at the caller's limit, the old ones go first.
    const mine = await app.http.get("/api/v1/organizations", { token: this.token });
    const orgs = (mine.body?.data?.organizations ?? []) as Array<{ id: string }>;
    if (orgs.length >= 10) for (const o of orgs) await app.http.delete(`/api/v1/organizations/${o.id}`, { token: this.token, body: { confirm: true } });
    const org = await newOrg(app, owner);
    const as = { token: this.token };
    const O = `/api/v1/organizations/${org.id}`;
    // The first organization provisions a managed account (admin reach applies to it); later ones
    // invite that same account back, which costs no password hashing.
    const member = this.member && (await addMember(app, org.id, owner, this.member, "member").then(() => true, () => false)) ? this.member : await addManagedMember(app, org.id, owner);
    this.member = member;
    const ca = await createCa(app, org.id, owner);
    const principalId = await grantPrincipal(app, org.id, owner, owner, "fuzz-ops");
    await grantPrincipal(app, org.id, owner, member, "fuzz-ops");
    const dept = (await app.http.post(`${O}/departments`, { name: "Fuzz dept" }, as)).body.data.department.id as string;
    await app.http.post(`${O}/departments/${dept}/members`, { email: member.email }, as);
    const apiKey = (await app.http.post(`${O}/api-keys`, { name: "fuzz" }, as)).body.data.api_key.id as string;
    const client = await registerClient(app, org.id, owner);
    const inviteToken = await invite(app, org.id, owner, uniqueEmail("invitee"));
    const inviteId = (await app.http.get(`${O}/invites`, as)).body.data.invites[0].id as string;
    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: this.sshKey, principals: ["fuzz-ops"], org_id: org.id }, as);
    if (signed.status !== 200 && signed.status !== 201) throw new Error(`sign failed: ${signed.status} ${signed.text}`);
    const certId = (await app.http.get("/api/v1/ssh/certificates", as)).body.data.certificates[0].id as string;
    const networks = await this.buildNetworks(O);
    const sessionId = (await app.http.get("/api/v1/auth/sessions", as)).body.data.sessions[0].id as string;
    const emailId = (await app.http.get("/api/v1/superadmin/emails", as)).body.data.emails[0].id as string;
    this.ids = {
      orgId: [org.id],
      userId: [member.id, this.caller.id],
      caId: [ca.id],
      certId: [certId],
      clientId: [client.clientId],
      deptId: [dept],
      inviteId: [inviteId],
      keyId: [this.sshKey, apiKey],
      principalId: [principalId],
      sessionId: [sessionId],
      token: [inviteToken],
      emailId: [emailId],
      provider: ["github", "google"],
      method: ["totp", "webauthn", "backup_codes"],
      ...networks,
    };
  }

  /** Network access on the ZeroTier Central stand-in: a portal network, a device, a pending approval. */
  private async buildNetworks(O: string): Promise<Record<string, string[]>> {
    const { app } = this;
    const as = { token: this.token };
    const config = await app.http.request("PUT", `${O}/zerotier-config`, { ...as, body: { zt_api_mode: "central", zt_api_token: CENTRAL_TOKEN } });
    if (config.status !== 200) throw new Error(`ZeroTier config failed: ${config.status} ${config.text}`);
    const networkId = (await app.http.post(`${O}/zerotier/import-networks`, { zerotier_network_ids: [CENTRAL_NETWORK] }, as)).body.data.networks[0].id as string;
    const nodeId = randomBytes(5).toString("hex");
    const deviceId = (await app.http.post(`${O}/devices`, { node_id: nodeId, nickname: "fuzz" }, as)).body.data.device.id as string;
    const approval = await app.http.post(`${O}/approvals`, { portal_network_id: networkId, device_id: deviceId, justification: "fuzz" }, as);
    return { networkId: [networkId], deviceId: [deviceId], ...(approval.status === 201 ? { approvalId: [approval.body.data.approval.id as string] } : {}) };
  }

  /**
   * Puts back what a fuzzed request took apart (cheaply: only what is gone): the session, the
   * superadmin flag, the SSH key, the organization with its CA. True when anything was rebuilt.
   */
  async ensure(): Promise<boolean> {
    const { app } = this;
    if (!(await app.services.sessions.resolve(this.token))) {
      this.token = (await app.services.sessions.create(this.caller.id, { rememberMe: false, ip: null, userAgent: null })).token;
    }
    const as = { token: this.token };
    if ((await app.http.get("/api/v1/auth/me", as)).status !== 200) {
      this.rebuilt.push("the caller's account");
      await this.build();
      return true;
    }
    let repaired = false;
    if ((await app.http.get("/api/v1/superadmin/users?per_page=1", as)).status !== 200) {
      this.rebuilt.push("superadmin");
      await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "fuzz", ip: null, userAgent: null }, this.caller.email, true);
      repaired = true;
    }
    if ((await app.http.get(`/api/v1/ssh/keys/${this.sshKey}`, as)).status !== 200) {
      this.rebuilt.push("SSH key");
      this.sshKey = (await addVerifiedKey(app, { ...this.caller, token: this.token }, this.localKey)).id;
      this.ids.keyId = [this.sshKey, ...this.ids.keyId!.slice(1)];
      repaired = true;
    }
    const orgId = this.ids.orgId![0]!;
    const cas = await app.http.get(`/api/v1/organizations/${orgId}/cas`, as);
    if (cas.status === 200 && !cas.body.data.cas.some((c: { id: string }) => c.id === this.ids.caId![0])) {
      this.rebuilt.push("CA");
      // A new CA in the same organization, unless its key-generation budget is spent.
      const ca = await app.http.post(`/api/v1/organizations/${orgId}/cas`, { name: "User CA" }, as);
      if (ca.status === 201) this.ids.caId = [ca.body.data.ca.id];
      else await this.buildOrg();
      repaired = true;
    } else if (cas.status !== 200) {
      this.rebuilt.push(`organization (${cas.status} ${cas.body?.error?.type})`);
      await this.buildOrg();
      repaired = true;
    }
    return repaired;
  }

  /** The value with every Ref replaced by the id it names now (a random-looking one when there is none). */
  resolve<T>(value: T): T {
    if (value instanceof Ref) return this.id(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.resolve(v)) as T;
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: this.resolve(v), enumerable: true, writable: true, configurable: true });
      return out as T;
    }
    return value;
  }

  id(ref: Ref): string {
    const pool = ref.kind === "any" ? Object.values(this.ids).flat() : (this.ids[ref.kind] ?? []);
    return pool.length ? pool[ref.index % pool.length]! : `00000000-0000-4000-8000-${String(ref.index).padStart(12, "0")}`;
  }
}
