import type { NetworkOffboarding } from "../networks/offboarding.js";
import type { CertificatesService } from "../ssh-ca/certificates.service.js";

/**
 * What ends with a person's standing in an organization (leaving, removal, suspension, account
 * deletion) or with the organization itself: their SSH certificates and their network access.
 * Called inside the service's transaction; `networks.apply` runs after it commits. One object,
 * built once in the container, for every service that removes people or organizations.
 */
export interface Offboarding {
  certificates: Pick<CertificatesService, "revokeForOffboarding" | "revokeAllOfOrganization" | "lockForRevocation">;
  networks: Pick<NetworkOffboarding, "personLeft" | "organizationDeleted" | "lockNetworksOf" | "apply">;
}
