import type { Http } from "./http.js";
import { arr, checkNetworkId, checkNodeId, obj, str } from "./json.js";
import { ControllerError, type ControllerClient, type ControllerMember, type ControllerNetwork } from "./types.js";

// --- self-hosted ZeroTierOne controller (§7) -----------------------------------------------------

/**
 * The documented self-hosted member listing is an id → revision map, each member then fetched on
 * its own; ZeroTierOne's HTTP server slows down sharply with parallel connections (100 members:
 * 1.1 s two at a time, 21 s eight at a time), so the fallback stays at two.
 */
const MEMBER_FETCH_CONCURRENCY = 2;

export function selfHostedClient(http: Http): ControllerClient {
  const network = (v: unknown): ControllerNetwork => {
    const o = obj(v);
    const id = str(o.id) ?? str(o.nwid);
    if (!id) throw new ControllerError("bad_response", "a network without an id");
    return { id: id.toLowerCase(), name: str(o.name) ?? "", description: null };
  };
  const member = (networkId: string, v: unknown): ControllerMember => {
    const o = obj(v);
    const nodeId = str(o.address) ?? str(o.id);
    if (!nodeId) throw new ControllerError("bad_response", "a member without an address");
    return {
      networkId,
      nodeId: nodeId.toLowerCase(),
      authorized: o.authorized === true,
      name: str(o.name),
      ipAssignments: Array.isArray(o.ipAssignments) ? o.ipAssignments.filter((x): x is string => typeof x === "string") : [],
      // The controller API says nothing about presence; a node that contacted it has an identity.
      lastSeen: str(o.identity) ? new Date(0) : null,
    };
  };
  const getNetwork = async (networkId: string) => {
    const nwid = checkNetworkId(networkId);
    const found = await http.json("GET", `/controller/network/${nwid}`, undefined, { allowMissing: true });
    if (!found) throw new ControllerError("not_found", `network ${nwid} is unknown to the controller`, 404);
    return network(found);
  };
  const getMember = async (networkId: string, nodeId: string) => {
    const nwid = checkNetworkId(networkId);
    const found = await http.json("GET", `/controller/network/${nwid}/member/${checkNodeId(nodeId)}`, undefined, { allowMissing: true });
    return found ? member(nwid, found) : null;
  };
  return {
    async test() {
      const status = obj(await http.json("GET", "/status"));
      const controller = obj(await http.json("GET", "/controller"));
      if (controller.controller !== true) throw new ControllerError("bad_response", "this ZeroTier node is not a network controller");
      return { address: str(status.address), version: str(status.version) };
    },
    async listNetworks() {
      // 1.10+ lists whole objects in one call (the "unstable" API); older controllers list ids.
      const all = await http.json("GET", "/unstable/controller/network", undefined, { allowMissing: true });
      if (all) return arr(obj(all).data).map(network);
      const ids = arr(await http.json("GET", "/controller/network")).filter((x): x is string => typeof x === "string");
      const out: ControllerNetwork[] = [];
      for (const id of ids) out.push(await getNetwork(id));
      return out;
    },
    getNetwork,
    async listMembers(networkId) {
      const nwid = checkNetworkId(networkId);
      // One call for every member where the controller has it (100 members: 3 ms instead of ~1 s).
      const all = await http.json("GET", `/unstable/controller/network/${nwid}/member`, undefined, { allowMissing: true });
      if (all) return arr(obj(all).data).map((m) => member(nwid, m));
      const found = await http.json("GET", `/controller/network/${nwid}/member`, undefined, { allowMissing: true });
      if (!found) throw new ControllerError("not_found", `network ${nwid} is unknown to the controller`, 404);
      const ids = Object.keys(obj(found));
      const out: ControllerMember[] = [];
      for (let i = 0; i < ids.length; i += MEMBER_FETCH_CONCURRENCY) {
        const batch = await Promise.all(ids.slice(i, i + MEMBER_FETCH_CONCURRENCY).map((id) => getMember(nwid, id)));
        for (const m of batch) if (m) out.push(m);
      }
      return out;
    },
    getMember,
    async setAuthorized(networkId, nodeId, authorized) {
      const nwid = checkNetworkId(networkId);
      const res = await http.json("POST", `/controller/network/${nwid}/member/${checkNodeId(nodeId)}`, { authorized }, { allowMissing: true });
      if (!res) throw new ControllerError("not_found", `network ${nwid} is unknown to the controller`, 404);
    },
    async createNetwork(name) {
      const { address } = await this.test();
      if (!address) throw new ControllerError("bad_response", "the controller did not say its address");
      return network(await http.json("POST", `/controller/network/${address}______`, { name })).id;
    },
  };
}
