/**
 * The checkout pages' HTML: plain server-rendered documents, one small stylesheet inline, and one
 * small script of our own (PAGE_SCRIPT) that only improves a page that works without it. Every
 * value from the database or the request goes through `escapeHtml`.
 */

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character)
}

/** Tagged template: interpolated strings are escaped, `Html` values (already markup) are not. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup
  }
}

type Part = string | number | Html | undefined | null | false | readonly Part[]

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return ''
  if (part instanceof Html) return part.markup
  if (Array.isArray(part)) return part.map((item: Part) => render(item)).join('')
  return escapeHtml(String(part))
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let markup = strings[0] ?? ''
  parts.forEach((part, index) => {
    markup += render(part) + (strings[index + 1] ?? '')
  })
  return new Html(markup)
}

const STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; color: #1f2328; background: #f3f4f6; }
* { box-sizing: border-box; }
body { margin: 0; }
.brand { background: var(--brand); color: var(--on-brand); }
.brand-inner, main, footer { max-width: 40rem; margin: 0 auto; padding: 1rem; }
.brand-inner { display: flex; align-items: center; gap: 0.75rem; min-height: 4rem; }
.brand-name { font-size: 1.125rem; font-weight: 700; margin: 0; overflow-wrap: anywhere; }
.brand-logo { height: 2.5rem; width: auto; max-width: 10rem; object-fit: contain; background: #fff; border-radius: 6px; padding: 2px; }
.brand-initial { display: inline-flex; align-items: center; justify-content: center; width: 2.5rem; height: 2.5rem; flex: none; border-radius: 50%; background: #fff; color: #1f2328; font-weight: 700; font-size: 1.25rem; }
main { background: #fff; border-radius: 12px; margin-top: 1rem; padding: 1.25rem; box-shadow: 0 1px 3px #0002; }
footer { color: #57606a; font-size: 0.875rem; text-align: center; }
footer a { color: #0b57d0; }
h1 { font-size: 1.5rem; margin: 0 0 0.5rem; overflow-wrap: anywhere; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 0.5rem; }
.eyebrow { color: #57606a; margin: 0; font-size: 0.9375rem; }
.headline { font-size: 2.25rem; font-weight: 700; margin: 0.25rem 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.headline .currency { font-size: 1.25rem; color: #57606a; }
.badge { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 999px; font-size: 0.875rem; font-weight: 600; background: #e7ecf3; color: #1f2328; }
.badge-paid { background: #dafbe1; color: #116329; }
.badge-overdue { background: #ffebe9; color: #a40e26; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 1rem 0; }
.facts dt { color: #57606a; font-weight: normal; margin: 0; }
.facts dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; table-layout: auto; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.25rem; }
th, td { text-align: left; padding: 0.4rem 0.35rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
th[scope="row"] { font-weight: normal; overflow-wrap: anywhere; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tfoot th { font-weight: normal; text-align: right; }
tfoot tr.total th, tfoot tr.total td { font-weight: 700; border-bottom: none; }
label { display: block; margin-top: 0.75rem; font-weight: 600; }
input, textarea { font: inherit; padding: 0.5rem; width: 100%; border: 1px solid #8c959f; border-radius: 6px; }
input.quantity { width: 4.5rem; padding: 0.35rem; }
button { font: inherit; font-weight: 600; margin-top: 1rem; padding: 0.7rem 1.2rem; cursor: pointer; border-radius: 8px; border: 1px solid #8c959f; background: #f6f8fa; color: #1f2328; }
button.pay { display: block; width: 100%; background: var(--brand); color: var(--on-brand); border-color: var(--brand); font-size: 1.0625rem; }
button.secondary { margin-top: 0.5rem; padding: 0.4rem 0.8rem; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.description p { margin: 0.5rem 0; }
.description ul, .description ol { padding-left: 1.25rem; }
.alert { border: 2px solid #b00020; padding: 0.75rem; border-radius: 8px; background: #fff5f5; }
.notice { border: 2px solid #1a7f37; padding: 0.75rem; border-radius: 8px; background: #f0fff4; }
.sandbox-banner { background: #fff8c5; color: #4d2d00; text-align: center; padding: 0.35rem 1rem; font-size: 0.875rem; margin: 0; }
.sandbox { border: 2px dashed #9a6700; padding: 0.75rem; border-radius: 8px; margin-top: 1.5rem; }
code { word-break: break-all; font-size: 0.9375rem; }
.address { display: block; padding: 0.6rem; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; font-size: 1rem; }
dt { font-weight: 600; margin-top: 0.5rem; }
dd { margin: 0; }
.qr { display: block; width: 100%; max-width: 15rem; height: auto; margin: 1rem auto; }
.warning { border-left: 4px solid #9a6700; padding-left: 0.75rem; }
.cover { display: block; max-width: 100%; height: auto; border-radius: 8px; margin: 0.5rem 0; }
.receipt { margin-top: 1rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 30rem) {
  .brand-inner, footer { padding: 0.75rem; }
  main { border-radius: 0; margin-top: 0; padding: 1rem 0.75rem; }
  .headline { font-size: 1.875rem; }
  th, td { padding: 0.35rem 0.2rem; }
}
@media print {
  :root { background: #fff; }
  .brand { background: #fff; color: #000; border-bottom: 2px solid #000; }
  main { box-shadow: none; margin: 0; }
  form, button, .no-print, script { display: none !important; }
  a { color: #000; text-decoration: none; }
}
`

/** The merchant a page shows: its name, logo, colours and support email. */
export interface PageBrand {
  display_name: string
  brand_color: string
  on_brand_color: string
  support_email: string | null
  logo_path: string | null
}

/** A page about no merchant's money (not found, an error): the platform's own, plain. */
export const PLATFORM_BRAND: PageBrand = { display_name: 'Checkout', brand_color: '#1d4ed8', on_brand_color: '#ffffff', support_email: null, logo_path: null }

// The colours are checked #rrggbb when set (branding), so they are safe inside the stylesheet.
const COLOR = /^#[0-9a-f]{6}$/i
function brandStyle(brand: PageBrand): string {
  const color = COLOR.test(brand.brand_color) ? brand.brand_color : PLATFORM_BRAND.brand_color
  const on = COLOR.test(brand.on_brand_color) ? brand.on_brand_color : '#ffffff'
  return `:root { --brand: ${color}; --on-brand: ${on}; }`
}

function brandMark(brand: PageBrand): Html {
  if (brand.logo_path !== null) return html`<img class="brand-logo" src="${brand.logo_path}" alt="">`
  return html`<span class="brand-initial" aria-hidden="true">${Array.from(brand.display_name.trim())[0]?.toUpperCase() ?? '?'}</span>`
}

/** A whole page: the merchant's band, a banner saying when its money is the sandbox's, the main content, and a footer with where to ask. */
export function layout(title: string, main: Html, environment: 'sandbox' | 'live' | undefined, brand: PageBrand = PLATFORM_BRAND): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${brand.display_name}</title>
<style>${new Html(STYLE)}${new Html(brandStyle(brand))}</style>
<script src="${PAGE_SCRIPT_PATH}" defer></script>
</head>
<body>
<header><div class="brand"><div class="brand-inner">${brandMark(brand)}<p class="brand-name">${brand.display_name}</p></div></div>
${environment === 'sandbox' ? html`<p class="sandbox-banner"><strong>Sandbox</strong>: no real money moves</p>` : ''}</header>
<main id="main">
${main}
</main>
<footer>${brand.support_email === null ? '' : html`<p>Questions about this payment? Write to <a href="mailto:${brand.support_email}">${brand.support_email}</a>.</p>`}<p>Paid in stablecoins on Base. Secure checkout by devplatform.</p></footer>
</body>
</html>`.markup}`
}

/** Where the pages' script is served, from this server (the only script the CSP allows). */
export const PAGE_SCRIPT_PATH = '/checkout/page.js'

/**
 * The pages' script: a payment's page asks its status route every few seconds and reloads when
 * the state changes (without script its Refresh link does it), and a copy button puts the
 * address on the clipboard (without script the address is selectable text).
 */
export const PAGE_SCRIPT = `'use strict'
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.dataset.copy)
    if (source === null || navigator.clipboard === undefined) continue
    button.hidden = false
    button.addEventListener('click', () => {
      navigator.clipboard.writeText(source.textContent.trim()).then(() => { button.textContent = 'Copied' }, () => { button.textContent = 'Select the address to copy it' })
    })
  }
  liveTotal()
  const watched = document.querySelector('[data-status-url]')
  if (watched === null) return
  const url = watched.dataset.statusUrl
  const state = watched.dataset.state
  const poll = () => {
    fetch(url, { credentials: 'omit', cache: 'no-store' })
      .then((response) => (response.ok ? response.json() : undefined))
      .then((body) => { if (body !== undefined && body.state !== state) location.reload(); else setTimeout(poll, 2000) })
      .catch(() => setTimeout(poll, 5000))
  }
  setTimeout(poll, 2000)
})

// A product link's total as the quantities change, counted as the server counts it: cents, the
// tax on the subtotal rounded half up to the cent.
function liveTotal() {
  const table = document.querySelector('table[data-live-total]')
  if (table === null) return
  const cents = (value) => { const [whole, fraction = ''] = value.split('.'); return BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2)) }
  const text = (value) => { const sign = value < 0n ? '-' : ''; const abs = value < 0n ? -value : value; return sign + (abs / 100n).toString() + '.' + (abs % 100n).toString().padStart(2, '0') }
  const percent = table.dataset.taxPercent
  const update = () => {
    let subtotal = 0n
    let valid = true
    for (const row of table.querySelectorAll('tr[data-unit-price]')) {
      const input = row.querySelector('input.quantity')
      const quantity = input === null ? NaN : Number(input.value)
      if (!Number.isInteger(quantity) || quantity < 0 || quantity > 10000) { valid = false; continue }
      const amount = cents(row.dataset.unitPrice) * BigInt(quantity)
      row.querySelector('[data-line-amount]').textContent = text(amount)
      subtotal += amount
    }
    if (!valid) return
    let tax = 0n
    if (percent !== undefined) {
      const [whole, fraction = ''] = percent.split('.')
      const divisor = 100n * 10n ** BigInt(fraction.length)
      tax = (subtotal * BigInt(whole + fraction) * 2n + divisor) / (2n * divisor)
    }
    const set = (name, value) => { for (const cell of document.querySelectorAll('[data-' + name + ']')) cell.textContent = text(value) }
    set('subtotal', subtotal)
    set('tax-amount', tax)
    set('total', subtotal + tax)
  }
  for (const input of table.querySelectorAll('input.quantity')) input.addEventListener('input', update)
  const updateButton = document.getElementById('update-total')
  if (updateButton !== null) updateButton.hidden = true
}
`

/**
 * The response headers of every page: only our own script (and fetches back here, its status
 * polls), no frame, no referrer (the page's address is
 * what lets a payer pay), forms posted only back here, and nothing kept in a cache.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src https: http:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
}
