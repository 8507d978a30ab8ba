/**
 * Where the OpenID provider is mounted and its endpoints' paths: here, below both the provider
 * (src/oidc) and the metrics that label requests by them, so neither imports the other upward.
 */
export const OIDC_PREFIX = "/api/v1/oidc";

/** Endpoint paths under OIDC_PREFIX (the original system's names where it had them; metrics label by them). */
export const ROUTES = {
  authorization: "/authorize",
  token: "/token",
  userinfo: "/userinfo",
  jwks: "/jwks",
  revocation: "/revoke",
  introspection: "/introspect",
  end_session: "/logout",
  device_authorization: "/device/auth",
  code_verification: "/device",
  pushed_authorization_request: "/par",
  registration: "/register",
};
