/** The shell every hosted page shares (sign-in, account, consent, device, sign-out). */

export const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Hosted pages load nothing from elsewhere and run no inline script. Forms post to this origin;
 * `formTargets` adds the origins a form's redirect may end at (a relying party's redirect URI),
 * since browsers apply form-action to the redirects that follow a submission.
 */
export function pageCsp(formTargets: readonly string[] = []): string {
  const forms = ["'self'", ...new Set(formTargets)].join(" ");
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action ${forms}; frame-ancestors 'none'; base-uri 'none'`;
}

export function layout(brand: string, title: string, body: string, scripts = true): string {
  const js = scripts ? `\n<script src="/assets/webauthn.js" defer></script>\n<script src="/assets/keyward.js" defer></script>` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${escapeHtml(brand)}</title>
<link rel="stylesheet" href="/assets/keyward.css">${js}
</head>
<body><main>
${body}
</main></body>
</html>`;
}
