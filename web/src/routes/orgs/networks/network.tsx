import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../../api";
import { graphql, type ResultOf } from "../../../graphql";
import { useShell } from "../../../shell";
import { Badge } from "../../../ui/Badge";
import { ErrorState, Loading, Success } from "../../../ui/States";
import { duration } from "../../../ui/TimeLeft";
import { ElevatedNotice } from "../elevated";
import { canHold, isAdmin, useOrg } from "../layout";
import { environmentLabel, requestModeLabel } from "./common";
import { DeleteNetwork, ImportDevices, Managers, Settings } from "./network-admin";
import { Devices, Grant, Requests } from "./network-people";

const NetworkQuery = graphql(`
  query PortalNetworkDetail($orgId: ID!, $networkId: ID!) {
    portalNetwork(orgId: $orgId, networkId: $networkId) {
      id name description zerotierNetworkId environment requestMode defaultActivationLifetimeMinutes maxActivationLifetimeMinutes isActive approvedUserCount activeMembershipCount createdAt
    }
    portalNetworkManagers(orgId: $orgId, networkId: $networkId) { userId email fullName }
  }
`);
/** What a manager of the network reads (admins, and the people named its managers). */
const ManagedQuery = graphql(`
  query PortalNetworkManaged($orgId: ID!, $networkId: ID!) {
    portalNetworkMembers(orgId: $orgId, networkId: $networkId) {
      id userId nodeId deviceDisplayName ownerName ownerEmail state currentlyAuthorized userNetworkApprovalId activeSession { id expiresAt }
    }
    portalNetworkRequests(orgId: $orgId, networkId: $networkId) { id userId userEmail userName networkName justification createdAt }
    members(orgId: $orgId) { userId email fullName role }
  }
`);

export type Network = ResultOf<typeof NetworkQuery>["portalNetwork"];
export type Managed = ResultOf<typeof ManagedQuery>;
export type Person = Managed["members"][number];

/** /orgs/<slug>/networks/<id>: one network. Managers decide its requests and see its devices; admins change it. */
export function NetworkDetail() {
  const org = useOrg();
  const admin = isAdmin(org);
  const { networkId } = useParams({ from: "/orgs/$slug/networks/$networkId" });
  const me = useShell().data?.me;
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const q = useQuery({ queryKey: ["org", org.id, "networks", "one", networkId], queryFn: () => gql(NetworkQuery, { orgId: org.id, networkId }) });
  const manager = admin || !!q.data?.portalNetworkManagers.some((m) => m.userId === me?.id);
  const managed = useQuery({ queryKey: ["org", org.id, "networks", "managed", networkId], queryFn: () => gql(ManagedQuery, { orgId: org.id, networkId }), enabled: manager && q.isSuccess });
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };

  if (q.isPending) return <Loading />;
  if (q.isError) {
    return (
      <div className="page">
        <BackLink />
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      </div>
    );
  }
  const n = q.data.portalNetwork;
  return (
    <div className="page">
      <BackLink />
      <h1>
        {n.name} {!n.isActive && <Badge tone="warn">switched off</Badge>}
      </h1>
      {n.description && <p className="lead">{n.description}</p>}
      {done && <Success>{done}</Success>}
      <dl className="facts">
        <div>
          <dt>ZeroTier network</dt>
          <dd>
            <code className="net-id">{n.zerotierNetworkId}</code>
          </dd>
        </div>
        <div>
          <dt>Who gets in</dt>
          <dd className="net-fact-text">{requestModeLabel(n.requestMode)}</dd>
        </div>
        <div>
          <dt>Activation</dt>
          <dd className="net-fact-text">
            {duration(n.defaultActivationLifetimeMinutes)}
            {n.maxActivationLifetimeMinutes != null && `, at most ${duration(n.maxActivationLifetimeMinutes)}`}
          </dd>
        </div>
        <div>
          <dt>Environment</dt>
          <dd className="net-fact-text">{environmentLabel(n.environment)}</dd>
        </div>
        <div>
          <dt>People with access</dt>
          <dd>{n.approvedUserCount}</dd>
        </div>
        <div>
          <dt>Devices on now</dt>
          <dd>{n.activeMembershipCount}</dd>
        </div>
      </dl>

      {manager &&
        (managed.isPending ? (
          <Loading />
        ) : managed.isError ? (
          <ErrorState error={managed.error} retry={() => void managed.refetch()} />
        ) : (
          <>
            <Requests orgId={org.id} data={managed.data} meId={me?.id} onDone={changed} />
            <Devices orgId={org.id} network={n} data={managed.data} admin={admin} onDone={changed} />
            <Grant orgId={org.id} network={n} people={managed.data.members.filter((p) => p.userId !== me?.id && p.role !== "guest")} onDone={changed} />
          </>
        ))}

      {/* Naming managers needs a lasting admin role: a temporary admin reads who they are. */}
      <Managers orgId={org.id} network={n} managers={q.data.portalNetworkManagers} people={admin && canHold(org) ? managed.data?.members : undefined} onDone={changed} />
      {admin && <ElevatedNotice org={org}>Naming the network's managers is not shown.</ElevatedNotice>}

      {admin && (
        <>
          <Settings key={n.id + String(n.isActive)} orgId={org.id} network={n} onDone={changed} />
          {managed.data && <ImportDevices orgId={org.id} network={n} people={managed.data.members.filter((p) => p.role !== "guest")} onDone={changed} />}
          <DeleteNetwork orgId={org.id} network={n} />
        </>
      )}
      {!manager && <p className="muted">To use {n.name}, ask for access from your account; its managers decide.</p>}
    </div>
  );
}

function BackLink() {
  const org = useOrg();
  return (
    <p className="net-back">
      <Link to="/orgs/$slug/networks" params={{ slug: org.slug }}>
        ← All networks
      </Link>
    </p>
  );
}

