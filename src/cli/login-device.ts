import * as oc from "openid-client";
import ora from "ora";
import type { Io } from "./output.js";
import { SCOPES } from "./oidc.js";

/**
 * The device authorization grant (RFC 8628) for machines without a browser: show the code and
 * where to enter it, then poll. openid-client honours the server's interval and slow_down; it ends
 * with expired_token or access_denied, which the error mapper words for the user.
 */
export async function deviceLogin(config: oc.Configuration, io: Io, resource: string): Promise<oc.TokenEndpointResponse> {
  const device = await oc.initiateDeviceAuthorization(config, { scope: SCOPES, resource });
  const c = io.err;
  io.stderr(`To sign in, open ${c.bold(device.verification_uri)} and enter the code ${c.bold(c.cyan(device.user_code))}`);
  if (device.verification_uri_complete) io.stderr(`(or open ${device.verification_uri_complete})`);
  // The spinner animates on a terminal only; piped stderr gets the line once.
  const spinner = ora({ text: "Waiting for approval…", stream: process.stderr, discardStdin: false, color: c.isColorSupported ? "cyan" : false }).start();
  try {
    const tokens = await oc.pollDeviceAuthorizationGrant(config, device, { resource });
    spinner.succeed("Approved");
    return tokens;
  } catch (e) {
    spinner.stop();
    throw e;
  }
}
