import * as oc from "openid-client";
import ora from "ora";
import { CliError, ExitCode } from "./errors.js";
import type { Io } from "./output.js";
import { SCOPES } from "./oidc.js";

/**
 * The device authorization grant (RFC 8628) for machines without a browser: show the code and
 * where to enter it, then poll. openid-client keeps to the server's interval and slows down on
 * slow_down; a denial comes back as access_denied, which the error mapper words for the user.
 */
export async function deviceLogin(config: oc.Configuration, io: Io, resource: string): Promise<oc.TokenEndpointResponse> {
  const device = await oc.initiateDeviceAuthorization(config, { scope: SCOPES, resource });
  const c = io.err;
  io.stderr(`To sign in, open ${c.bold(device.verification_uri)} and enter the code ${c.bold(c.cyan(device.user_code))}`);
  if (device.verification_uri_complete) io.stderr(`(or open ${device.verification_uri_complete})`);
  // The spinner animates on a terminal only; piped stderr gets the line once. So does a terminal
  // that reports no width (a bare pseudo-terminal): ora divides by the width to count the lines
  // it redraws, and would erase lines upwards without end.
  const sized = Boolean(process.stderr.columns);
  const spinner = ora({ text: "Waiting for approval…", stream: process.stderr, discardStdin: false, color: c.isColorSupported ? "cyan" : false, ...(sized ? {} : { isEnabled: false }) }).start();
  // Stop polling when the code dies, whether or not the server says expired_token first.
  const expiry = AbortSignal.timeout(device.expires_in * 1000);
  try {
    const tokens = await oc.pollDeviceAuthorizationGrant(config, device, { resource }, { signal: expiry });
    // Our own mark, not ora's succeed(): log-symbols colours its mark whenever TERM names a colour
    // terminal, even when stderr is a pipe or a file.
    spinner.stopAndPersist({ symbol: c.green("✓"), text: "Approved" });
    return tokens;
  } catch (e) {
    spinner.stop();
    if (expiry.aborted) throw new CliError("The sign-in code expired before it was approved: run `keyward login --device` again", ExitCode.AUTH, "EXPIRED_TOKEN");
    throw e;
  }
}
