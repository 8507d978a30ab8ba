/** docs/enterprise-sign-in.md in short: what to enter at each provider, and what to enter here. */
export function ProviderHelp({ redirectUri }: { redirectUri: string }) {
  return (
    <section aria-labelledby="sso-help" className="sso-help">
      <h2 id="sso-help" tabIndex={-1}>
        Setting up your provider
      </h2>
      <p className="muted">
        Every provider gets the redirect URI <code>{redirectUri}</code> and the scopes <code>openid email profile</code>. Keyward's documentation (docs/enterprise-sign-in.md) has the details.
      </p>
      <details className="more">
        <summary>Microsoft Entra ID</summary>
        <ol>
          <li>App registrations → New registration: accounts in this organizational directory only; redirect URI, platform Web, as above.</li>
          <li>Certificates &amp; secrets → New client secret: copy its Value (shown once).</li>
          <li>Token configuration → Add groups claim (security groups, Group ID), and the optional ID claim email.</li>
        </ol>
        <p>
          Here: issuer <code>https://login.microsoftonline.com/&lt;tenant-id&gt;/v2.0</code>, the Application (client) ID, groups claim <code>groups</code>; map group object ids. For accounts without a
          mailbox, email claim <code>preferred_username</code>.
        </p>
      </details>
      <details className="more">
        <summary>Okta</summary>
        <ol>
          <li>Applications → Create App Integration → OIDC, Web Application; grant Authorization Code; sign-in redirect URI as above; assign people or groups.</li>
          <li>Sign On tab → OpenID Connect ID Token: groups claim type Filter, name groups, matches regex .*</li>
        </ol>
        <p>
          Here: issuer <code>https://&lt;your-okta-domain&gt;</code> (or …/oauth2/default), client ID and secret from the General tab, scopes <code>openid email profile groups</code>, groups claim{" "}
          <code>groups</code>; map Okta group names.
        </p>
      </details>
      <details className="more">
        <summary>Google Workspace</summary>
        <ol>
          <li>Google Cloud console → OAuth consent screen: user type Internal.</li>
          <li>Credentials → OAuth client ID → Web application; authorized redirect URI as above.</li>
        </ol>
        <p>
          Here: issuer <code>https://accounts.google.com</code>, the client ID and secret. Google sends no groups: everyone gets the role of a new member; assign roles and departments in Keyward.
        </p>
      </details>
      <details className="more">
        <summary>Keycloak</summary>
        <ol>
          <li>Clients → Create client: OpenID Connect, client authentication on, standard flow on; valid redirect URI as above. The secret is on the Credentials tab.</li>
          <li>Client scopes → the client's dedicated scope → Add mapper → Group Membership: claim name groups, full group path off, add to ID token on.</li>
        </ol>
        <p>
          Here: issuer <code>https://&lt;keycloak-host&gt;/realms/&lt;realm&gt;</code>, groups claim <code>groups</code>; map Keycloak group names.
        </p>
      </details>
    </section>
  );
}

/** The SAML side of docs/enterprise-sign-in.md in short: where the SP values go at each IdP, and what to give Keyward. */
export function SamlHelp() {
  return (
    <section aria-labelledby="sso-saml-help" className="sso-help">
      <h2 id="sso-saml-help" tabIndex={-1}>
        Setting up a SAML IdP
      </h2>
      <p className="muted">
        Add the connection here first: its card then shows Keyward's SP entity ID, ACS URL (HTTP-POST), SLO URL and metadata. Release the attributes <code>email</code>, <code>name</code> and{" "}
        <code>groups</code>, with the NameID format EmailAddress, and sign responses or assertions with RSA-SHA256.
      </p>
      <details className="more">
        <summary>Okta (SAML 2.0 app)</summary>
        <ol>
          <li>Applications → Create App Integration → SAML 2.0. Single sign-on URL: the ACS URL (also for Recipient and Destination). Audience URI: the SP entity ID.</li>
          <li>Name ID format EmailAddress; attribute statements email and name; group attribute statement groups, filter Matches regex .*</li>
        </ol>
        <p>Here: the metadata URL from the app's Sign On tab; map Okta group names.</p>
      </details>
      <details className="more">
        <summary>Microsoft Entra ID (enterprise application)</summary>
        <ol>
          <li>Enterprise applications → New application → Create your own application; Single sign-on → SAML. Identifier: the SP entity ID; Reply URL: the ACS URL; Logout URL: the SLO URL.</li>
          <li>Attributes &amp; Claims: claims email and name without namespace; a group claim (security groups, Group ID) named groups.</li>
        </ol>
        <p>Here: the App Federation Metadata Url; map group object ids.</p>
      </details>
      <details className="more">
        <summary>Google Workspace (custom SAML app)</summary>
        <ol>
          <li>Apps → Web and mobile apps → Add custom SAML app; download the IdP metadata.</li>
          <li>ACS URL and entity ID as on the card; Name ID: primary email; attribute mapping email, name and group membership as groups.</li>
        </ol>
        <p>Here: the downloaded file (Google has no metadata URL: upload a new file when Google changes its certificate).</p>
      </details>
      <details className="more">
        <summary>Keycloak (SAML client)</summary>
        <ol>
          <li>Clients → Import client → the SP metadata URL (or Create client → SAML with the SP entity ID as client ID, the ACS and SLO URLs).</li>
          <li>Client scopes → the dedicated scope → mappers: email, name, and a Group list mapper named groups (full group path off).</li>
        </ol>
        <p>
          Here: the metadata URL <code>https://&lt;keycloak-host&gt;/realms/&lt;realm&gt;/protocol/saml/descriptor</code>.
        </p>
      </details>
    </section>
  );
}
