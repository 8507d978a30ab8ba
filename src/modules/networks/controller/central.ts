import type { Http } from "./http.js";
import { arr, checkNetworkId, checkNodeId, obj, str } from "./json.js";
import { ControllerError, type ControllerClient, type ControllerMember, type ControllerNetwork } from "./types.js";

// --- ZeroTier Central (§6) -----------------------------------------------------------------------


export function centralClient(http: Http): ControllerClient {
  const network = (v: unknown): ControllerNetwork => {
    const o = obj(v);
    const config = o.config && typeof o.config === "object" ? (o.config as Record<string, unknown>) : {};
    const id = str(o.id) ?? str(config.id);
    if (!id) throw new ControllerError("bad_response", "a network without an id");
    return { id: id.toLowerCase(), name: str(config.name) ?? "", description: str(o.description) };
  };
  const member = (networkId: string, v: unknown): ControllerMember => {
    const o = obj(v);
    const config = o.config && typeof o.config === "object" ? (o.config as Record<string, unknown>) : {};
    const nodeId = str(o.nodeId) ?? str(config.id);
    if (!nodeId) throw new ControllerError("bad_response", "a member without a node id");
    const seen = typeof o.lastSeen === "number" && o.lastSeen > 0 ? o.lastSeen : typeof o.lastOnline === "number" && o.lastOnline > 0 ? o.lastOnline : null;
    return {
      networkId,
      nodeId: nodeId.toLowerCase(),
      authorized: config.authorized === true,
      name: str(o.name),
      ipAssignments: Array.isArray(config.ipAssignments) ? config.ipAssignments.filter((x): x is string => typeof x === "string") : [],
      lastSeen: seen ? new Date(seen) : null,
    };
  };
  return {
    async test() {
      const status = obj(await http.json("GET", "/status"));
      // /status answers anonymous callers too: listing networks proves the token.
      await http.json("GET", "/network");
      return { address: null, version: str(status.version) };
    },
    async listNetworks() {
      return arr(await http.json("GET", "/network")).map(network);
    },
    async getNetwork(networkId) {
      return network(await http.json("GET", `/network/${checkNetworkId(networkId)}`));
    },
    async listMembers(networkId) {
      const nwid = checkNetworkId(networkId);
      return arr(await http.json("GET", `/network/${nwid}/member`)).map((m) => member(nwid, m));
    },
    async getMember(networkId, nodeId) {
      const nwid = checkNetworkId(networkId);
      const found = await http.json("GET", `/network/${nwid}/member/${checkNodeId(nodeId)}`, undefined, { allowMissing: true });
      return found ? member(nwid, found) : null;
    },
    async setAuthorized(networkId, nodeId, authorized) {
      await http.json("POST", `/network/${checkNetworkId(networkId)}/member/${checkNodeId(nodeId)}`, { config: { authorized } });
    },
  };
}
