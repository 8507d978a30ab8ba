import { ControllerError } from "./types.js";

/** Reading controller answers: ids are checked, JSON is taken apart defensively (a bad answer is a ControllerError). */

const NETWORK_ID = /^[0-9a-f]{16}$/;
const NODE_ID = /^[0-9a-f]{10}$/;

export const checkNetworkId = (id: string): string => {
  const v = id.toLowerCase();
  if (!NETWORK_ID.test(v)) throw new ControllerError("bad_response", "a network id is 16 hexadecimal characters");
  return v;
};
export const checkNodeId = (id: string): string => {
  const v = id.toLowerCase();
  if (!NODE_ID.test(v)) throw new ControllerError("bad_response", "a node id is 10 hexadecimal characters");
  return v;
};

export const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);
export const obj = (v: unknown): Record<string, unknown> => {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new ControllerError("bad_response", "expected a JSON object");
  return v as Record<string, unknown>;
};
export const arr = (v: unknown): unknown[] => {
  if (!Array.isArray(v)) throw new ControllerError("bad_response", "expected a JSON array");
  return v;
};
