/** The shell every hosted page shares (sign-in, consent, device, sign-out, the emailed-link flows). */

/**
 * For text and double-quoted attribute values: `&` (no entity passes through), `<` and `>` (no
 * tag), both quotes (no way out of a value), and the backtick, which old parsers took for a quote.
 */
export const escapeHtml = (v: string) => v.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Hosted pages load nothing from elsewhere and run no inline script. Forms post to this origin;
 * `formTargets` adds the origins a form's redirect may end at (a relying party's redirect URI),
 * since browsers apply form-action to the redirects that follow a submission.
 */
export function pageCsp(formTargets: readonly string[] = []): string {
  const forms = ["'self'", ...new Set(formTargets)].join(" ");
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action ${forms}; frame-ancestors 'none'; base-uri 'none'`;
}

/** The logo mark: a key in a rounded square, drawn inline (no request, nothing the CSP must allow). */
const LOGO = `<svg class="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
<rect class="logo-bg" width="32" height="32" rx="8"/>
<circle class="logo-fg" cx="11.5" cy="16" r="4.5" fill="none" stroke-width="3"/>
<path class="logo-fg" d="M16 16h10.5M22.5 16v4.5M26.5 16v3.5" fill="none" stroke-width="3" stroke-linecap="round"/>
</svg>`;

/** The sign-in pages' scripts: what `scripts = true` loads. */
const DEFAULT_SCRIPTS = ["webauthn.js", "keyward.js"];

/**
 * One page. `scripts`: true for the sign-in scripts, false for none, or the names of the
 * files under /assets/ this page needs.
 */
export function layout(brand: string, title: string, body: string, scripts: boolean | readonly string[] = true): string {
  const names = scripts === true ? DEFAULT_SCRIPTS : scripts === false ? [] : scripts;
  const js = names.map((n) => `\n<script src="/assets/${escapeHtml(n)}" defer></script>`).join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${escapeHtml(brand)}</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/tokens.css">
<link rel="stylesheet" href="/assets/keyward.css">${js}
</head>
<body>
<header class="site-header"><a class="brand" href="/">${LOGO}<span>${escapeHtml(brand)}</span></a></header>
<main>
${body}
</main>
</body>
</html>`;
}
