/** The normalized shapes both controller APIs are read into, and the one error they raise. */

export type ControllerMode = "controller" | "central";
export interface ControllerConfig {
  mode: ControllerMode;
  baseUrl: string;
  token: string;
}
export interface ControllerNetwork {
  /** 16 hex. */
  id: string;
  name: string;
  description: string | null;
}
export interface ControllerMember {
  networkId: string;
  /** 10 hex. */
  nodeId: string;
  authorized: boolean;
  name: string | null;
  ipAssignments: string[];
  /** When the node last talked to the controller, if it ever did (Central only reports it). */
  lastSeen: Date | null;
}
export type ControllerErrorKind = "unreachable" | "unauthorized" | "forbidden" | "not_found" | "rate_limited" | "server_error" | "bad_response";

export class ControllerError extends Error {
  constructor(
    readonly kind: ControllerErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "ControllerError";
  }
}

export interface ControllerClient {
  /** A live connectivity and credential check; the controller's address when it says. */
  test(): Promise<{ address: string | null; version: string | null }>;
  listNetworks(): Promise<ControllerNetwork[]>;
  getNetwork(networkId: string): Promise<ControllerNetwork>;
  listMembers(networkId: string): Promise<ControllerMember[]>;
  getMember(networkId: string, nodeId: string): Promise<ControllerMember | null>;
  /** Idempotent; creates the member record when the node never joined (both APIs upsert). */
  setAuthorized(networkId: string, nodeId: string, authorized: boolean): Promise<void>;
  /** Self-hosted only (tests and benches): a new network under the controller's address. */
  createNetwork?(name: string): Promise<string>;
}
