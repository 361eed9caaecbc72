import type { Brand } from '../branding/public.js'
import { Html, html } from '../checkout/public.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { ConsoleRole } from './sessions.js'

/**
 * The console's HTML: server-rendered documents with one inline stylesheet and no script, so
 * every page and form works as it is. Every value goes through the checkout's `html` template,
 * which escapes it.
 */

export { Html, html }

const STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.45; color: #1f2328; background: #f6f8fa; font-size: 15px; }
* { box-sizing: border-box; }
body { margin: 0; }
a { color: #0b57d0; }
.band { background: var(--brand); color: var(--on-brand); }
.band-inner { max-width: 72rem; margin: 0 auto; padding: 0.6rem 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem; }
.brand-logo { height: 2rem; width: auto; max-width: 8rem; object-fit: contain; background: #fff; border-radius: 6px; padding: 2px; }
.brand-initial { display: inline-flex; align-items: center; justify-content: center; width: 2rem; height: 2rem; border-radius: 50%; background: #fff; color: #1f2328; font-weight: 700; }
.brand-name { font-weight: 700; margin: 0; overflow-wrap: anywhere; }
.band .spacer { flex: 1; }
.role { font-size: 0.8125rem; border: 1px solid currentColor; border-radius: 999px; padding: 0 0.5rem; }
.band form { margin: 0; }
.band button { margin: 0; padding: 0.25rem 0.7rem; font-size: 0.875rem; background: transparent; color: inherit; border-color: currentColor; }
.envs { display: inline-flex; border: 1px solid currentColor; border-radius: 8px; overflow: hidden; }
.envs a { color: inherit; text-decoration: none; padding: 0.2rem 0.7rem; font-size: 0.875rem; }
.envs a[aria-current="page"] { background: var(--on-brand); color: var(--brand); font-weight: 700; }
nav.sections { background: #fff; border-bottom: 1px solid #d0d7de; }
nav.sections ul { list-style: none; margin: 0 auto; padding: 0 0.5rem; max-width: 72rem; display: flex; flex-wrap: wrap; }
nav.sections a { display: block; padding: 0.6rem 0.6rem; color: #1f2328; text-decoration: none; border-bottom: 3px solid transparent; }
nav.sections a[aria-current="page"] { border-bottom-color: var(--brand); font-weight: 700; }
.live-banner, .sandbox-banner { margin: 0; text-align: center; font-size: 0.8125rem; padding: 0.25rem 1rem; }
.sandbox-banner { background: #fff8c5; color: #4d2d00; }
.live-banner { background: #dafbe1; color: #0f3d1d; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 0.5rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: 0.75rem; }
.card { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 0.9rem 1rem; }
.card h3 { margin: 0; font-size: 0.875rem; color: #57606a; font-weight: 600; }
.card .amount { font-size: 1.5rem; font-weight: 700; font-variant-numeric: tabular-nums; margin: 0.25rem 0; overflow-wrap: anywhere; }
.card p { margin: 0.2rem 0; color: #57606a; font-size: 0.875rem; }
.panel { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 1rem; margin: 1rem 0; }
.table-scroll { overflow-x: auto; background: #fff; border: 1px solid #d0d7de; border-radius: 10px; margin: 0.75rem 0; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0.6rem 0.75rem 0.2rem; }
th, td { text-align: left; padding: 0.45rem 0.75rem; border-bottom: 1px solid #eaeef2; vertical-align: top; }
thead th { font-size: 0.8125rem; color: #57606a; font-weight: 600; background: #f6f8fa; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td code, dd code { font-size: 0.8125rem; word-break: break-all; }
.empty { color: #57606a; padding: 0.75rem; margin: 0; }
.badge { display: inline-block; padding: 0 0.5rem; border-radius: 999px; font-size: 0.8125rem; font-weight: 600; background: #eaeef2; color: #1f2328; white-space: nowrap; }
.badge.good { background: #dafbe1; color: #0f5323; }
.badge.bad { background: #ffebe9; color: #8c0a1f; }
.badge.wait { background: #fff8c5; color: #4d2d00; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0; }
.facts dt { color: #57606a; }
.facts dd { margin: 0; overflow-wrap: anywhere; }
form.inline { display: inline; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: flex-end; background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 0.75rem 1rem; }
form.filters label, form.stack label { display: block; font-size: 0.8125rem; font-weight: 600; color: #1f2328; }
input, select { font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #8c959f; border-radius: 6px; max-width: 100%; background: #fff; }
button { font: inherit; font-weight: 600; padding: 0.4rem 0.9rem; cursor: pointer; border-radius: 6px; border: 1px solid #8c959f; background: #f6f8fa; color: #1f2328; }
button.primary { background: var(--brand); color: var(--on-brand); border-color: var(--brand); }
button.danger { color: #8c0a1f; border-color: #cf222e; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: flex-end; margin: 0.5rem 0; }
.notice { border-left: 4px solid #1a7f37; background: #f0fff4; padding: 0.6rem 0.8rem; border-radius: 6px; }
.alert { border-left: 4px solid #cf222e; background: #fff5f5; padding: 0.6rem 0.8rem; border-radius: 6px; }
.chart { display: block; width: 100%; height: auto; max-width: 44rem; }
.chart text { font-size: 11px; fill: #57606a; }
.legend { display: flex; flex-wrap: wrap; gap: 1rem; font-size: 0.8125rem; color: #57606a; margin: 0.25rem 0 0; padding: 0; list-style: none; }
.swatch { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 2px; vertical-align: -1px; margin-right: 0.3rem; }
.timeline { list-style: none; padding: 0; margin: 0; border-left: 2px solid #d0d7de; }
.timeline li { position: relative; padding: 0.2rem 0 0.6rem 1rem; }
.timeline li::before { content: ""; position: absolute; left: -6px; top: 0.55rem; width: 10px; height: 10px; border-radius: 50%; background: var(--brand); }
pre { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.5rem; font-size: 0.8125rem; max-height: 16rem; overflow: auto; }
.muted { color: #57606a; }
.center { max-width: 32rem; margin: 3rem auto; background: #fff; border: 1px solid #d0d7de; border-radius: 12px; padding: 1.5rem; }
@media (max-width: 40rem) {
  main { padding: 0.75rem 0.5rem; }
  th, td { padding: 0.4rem 0.45rem; }
  .facts { grid-template-columns: 1fr; }
  .facts dd { margin-bottom: 0.4rem; }
}
`

// Colours are checked #rrggbb by branding, so they are safe inside the stylesheet.
const COLOR = /^#[0-9a-f]{6}$/i
function brandStyle(brand: Brand): string {
  const color = COLOR.test(brand.brand_color) ? brand.brand_color : '#1d4ed8'
  const on = COLOR.test(brand.on_brand_color) ? brand.on_brand_color : '#ffffff'
  return `:root { --brand: ${color}; --on-brand: ${on}; }`
}

function brandMark(brand: Brand): Html {
  if (brand.logo_path !== null) return html`<img class="brand-logo" src="${brand.logo_path}" alt="">`
  return html`<span class="brand-initial" aria-hidden="true">${Array.from(brand.display_name.trim())[0]?.toUpperCase() ?? '?'}</span>`
}

/** The console's sections, in the navigation's order: path under the environment, and name. */
export const SECTIONS = [
  ['', 'Overview'],
  ['/payments', 'Payments'],
  ['/invoices', 'Invoices'],
  ['/payment-links', 'Payment links'],
  ['/customers', 'Customers'],
  ['/webhooks', 'Webhooks'],
  ['/keys', 'API keys'],
  ['/held', 'Held money'],
  ['/events', 'Events'],
] as const
export type Section = (typeof SECTIONS)[number][0]

/** Who is looking, where: what every signed-in page's frame shows. */
export interface Frame {
  brand: Brand
  environment: LedgerEnvironment
  role: ConsoleRole
  csrfToken: string
  section: Section
  /** the page's path under its environment, for the switch to the same page in the other one */
  switchPath: string
}

/** A stored ISO time as a page shows it (UTC, to the second), or a dash for none. */
export function timeOf(iso: string | null): string {
  return iso === null ? '—' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')
}

/** A table that scrolls sideways on a narrow screen: a named region a keyboard can reach and scroll. */
export function scrollingTable(label: string, table: Html): Html {
  return html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`
}

function document(title: string, brand: Brand | undefined, body: Html, head: Html = html``): string {
  const style = brand === undefined ? ':root { --brand: #1d4ed8; --on-brand: #ffffff; }' : brandStyle(brand)
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${head}<title>${title}${brand === undefined ? '' : ` · ${brand.display_name}`} · Console</title>
<style>${new Html(STYLE)}${new Html(style)}</style>
</head>
${body}
</html>`.markup}`
}

const ENVIRONMENT_NAMES: Readonly<Record<LedgerEnvironment, string>> = { sandbox: 'Sandbox', live: 'Live' }

/** A signed-in page: the merchant's band with the environment switch and sign-out, the sections, the content. */
export function consolePage(title: string, frame: Frame, main: Html): string {
  const base = `/console/${frame.environment}`
  const envs = (['sandbox', 'live'] as const).map(
    (environment) => html`<a href="/console/${environment}${frame.switchPath}"${environment === frame.environment ? html` aria-current="page"` : ''}>${ENVIRONMENT_NAMES[environment]}</a>`,
  )
  const sections = SECTIONS.map(([path, name]) => html`<li><a href="${base}${path}"${path === frame.section ? html` aria-current="page"` : ''}>${name}</a></li>`)
  return document(
    title,
    frame.brand,
    html`<body>
<header>
<div class="band"><div class="band-inner">${brandMark(frame.brand)}<p class="brand-name">${frame.brand.display_name}</p>
<nav class="envs" aria-label="Environment">${envs}</nav>
<span class="spacer"></span><span class="role">${frame.role === 'admin' ? 'Admin' : 'Viewer'}</span>
<form method="post" action="/console/logout">${csrfField(frame.csrfToken)}<button type="submit">Sign out</button></form></div></div>
${frame.environment === 'sandbox' ? html`<p class="sandbox-banner"><strong>Sandbox</strong>: test money, nothing real moves</p>` : html`<p class="live-banner"><strong>Live</strong>: real money</p>`}
<nav class="sections" aria-label="Sections"><ul>${sections}</ul></nav>
</header>
<main id="main">
<h1>${title}</h1>
${main}
</main>
</body>`,
  )
}

/** A page outside a session (a refused link, signed out): the platform's plain frame, or the merchant's when known. */
export function plainPage(title: string, main: Html, options: { brand?: Brand | undefined; refreshTo?: string } = {}): string {
  const head = options.refreshTo === undefined ? html`` : html`<meta http-equiv="refresh" content="0;url=${options.refreshTo}">\n`
  return document(title, options.brand, html`<body><main id="main" class="center"><h1>${title}</h1>${main}</main></body>`, head)
}

/**
 * The response headers of every console page: no script at all, images and forms only from here,
 * no frame, no referrer, nothing cached (a page shows an application's money).
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
}
