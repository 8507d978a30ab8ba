import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import type { GqlContext } from "../context.js";
import { scope } from "../scope.js";
import { org } from "../org-extension.js";
import { loose } from "../common/inputs.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import {
  CaPublicKey,
  Certificate,
  CertificateAuditEntry,
  CertificateAuthority,
  CertificatePage,
  CreateCaInput,
  EffectiveCertPolicy,
  RevokedCount,
  RotateCaPayload,
  SignedCertificate,
  SignHostCertificateInput,
  SignUserCertificateInput,
  SshClientConfig,
  SshServerConfig,
  UpdateCaInput,
} from "./ssh-ca.types.js";

/** SSH certificates: the organization's CAs, signing under department policy, issued certificates. */
@Resolver()
export class SshCaResolver {
  constructor(private readonly s: Pick<Services, "cas" | "certificates" | "signing">) {}

  @Authorized()
  @org(OrgRole.member)
  @scope("ssh:sign")
  @Query(() => EffectiveCertPolicy, { description: "The certificate policy you sign under" })
  myCertPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID, { nullable: true }) orgId?: string) {
    return this.s.signing.effectivePolicy(ctx, omitNulls(orgId));
  }

  @Authorized()
  @scope("ssh:sign")
  @Mutation(() => SignedCertificate)
  signUserCertificate(@Ctx() { ctx }: GqlContext, @Arg("input", () => SignUserCertificateInput) input: SignUserCertificateInput) {
    return this.s.signing.signUserCertificate(ctx, omitNulls(input));
  }

  @Authorized()
  @Mutation(() => SignedCertificate)
  signHostCertificate(@Ctx() { ctx }: GqlContext, @Arg("input", () => SignHostCertificateInput) input: SignHostCertificateInput) {
    return this.s.signing.signHostCertificate(ctx, omitNulls(input));
  }

  @Authorized()
  @scope("ssh:sign")
  @Query(() => CertificatePage)
  mySshCertificates(@Ctx() { ctx }: GqlContext, @Arg("page", () => Int, { nullable: true }) page?: number, @Arg("perPage", () => Int, { nullable: true }) perPage?: number) {
    return this.s.certificates.listMine(ctx, omitNulls({ page, perPage }));
  }

  @Authorized()
  @Query(() => Certificate)
  sshCertificate(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    return this.s.certificates.get(ctx, id);
  }

  @Authorized()
  @Mutation(() => Certificate)
  revokeCertificate(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    return this.s.certificates.revoke(ctx, id, omitNulls({ reason }));
  }

  @Authorized()
  @org(OrgRole.guest)
  @scope("ssh:sign")
  @Query(() => CaPublicKey)
  caPublicKey(@Ctx() { ctx }: GqlContext, @Arg("caType", () => String, { nullable: true }) caType?: string, @Arg("orgId", () => ID, { nullable: true }) orgId?: string) {
    return this.s.cas.publicKey(ctx, omitNulls({ caType, orgId }));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [CertificateAuthority])
  certificateAuthorities(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.cas.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CertificateAuthority)
  createCertificateAuthority(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => CreateCaInput) input: CreateCaInput) {
    return this.s.cas.create(ctx, orgId, loose(omitNulls(input)));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CertificateAuthority)
  updateCertificateAuthority(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("caId", () => ID) caId: string, @Arg("input", () => UpdateCaInput) input: UpdateCaInput) {
    return this.s.cas.update(ctx, orgId, caId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async deleteCertificateAuthority(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("caId", () => ID) caId: string) {
    await this.s.cas.delete(ctx, orgId, caId);
    return message("Certificate authority deleted");
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => RotateCaPayload)
  rotateCertificateAuthority(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("caId", () => ID) caId: string,
    @Arg("keyType", () => String, { nullable: true }) keyType?: string,
    @Arg("reason", () => String, { nullable: true }) reason?: string,
  ) {
    return this.s.cas.rotate(ctx, orgId, caId, loose(omitNulls({ keyType, reason })));
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => SshServerConfig, { description: "TrustedUserCAKeys lines and the known_hosts @cert-authority line" })
  sshServerConfig(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.cas.serverConfig(ctx, orgId);
  }

  @Authorized()
  @scope("ssh:sign")
  @Query(() => SshClientConfig, { description: "For keyward ssh config: your organizations, whether each signs user certificates, its host CA's patterns and known_hosts lines" })
  mySshClientConfig(@Ctx() { ctx }: GqlContext) {
    return this.s.cas.clientConfig(ctx);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => CertificatePage)
  organizationCertificates(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("userId", () => ID, { nullable: true, description: "Whose certificates (host certificates have no holder)" }) userId?: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
    @Arg("principal", () => String, { nullable: true, description: "Only certificates naming this principal" }) principal?: string,
    @Arg("status", () => String, { nullable: true, description: "active, expired or revoked" }) status?: string,
    @Arg("certType", () => String, { nullable: true, description: "user or host" }) certType?: string,
  ) {
    return this.s.certificates.listForOrg(ctx, orgId, loose(omitNulls({ userId, page, perPage, principal, status, certType })));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [CertificateAuditEntry])
  async certificateAuditLog(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("action", () => String, { nullable: true }) action?: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
  ) {
    return (await this.s.certificates.auditLog(ctx, orgId, loose(omitNulls({ action, page })))).items;
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => RevokedCount, { description: "Revoke every certificate of a user in the organization" })
  revokeUserCertificates(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("userId", () => ID) userId: string,
    @Arg("reason", () => String, { nullable: true }) reason?: string,
  ) {
    return this.s.certificates.revokeUser(ctx, orgId, userId, omitNulls({ reason }));
  }
}
