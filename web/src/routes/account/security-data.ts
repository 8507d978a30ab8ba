import { useQueryClient } from "@tanstack/react-query";
import { graphql, type ResultOf } from "../../graphql";

/** What /account/security shows: the password's presence, the second factors, the deadlines. */
export const SecurityQuery = graphql(`
  query AccountSecurity {
    me { id email hasPassword }
    mfaStatus { mfaEnabled totpEnabled webauthnEnabled backupCodesRemaining }
    myWebauthnCredentials { id name createdAt lastUsedAt }
    myMfaCompliance { organizationId organizationName status deadlineAt }
  }
`);
export type Security = ResultOf<typeof SecurityQuery>;

/** Everything the screen changes is read again by it (and by the home's deadlines). */
export const useRefreshSecurity = () => {
  const qc = useQueryClient();
  return () => Promise.all([qc.invalidateQueries({ queryKey: ["account"] }), qc.invalidateQueries({ queryKey: ["home"] })]);
};
