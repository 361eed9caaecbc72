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
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; }
header, main, footer { max-width: 40rem; margin: 0 auto; padding: 1rem; }
header { border-bottom: 1px solid #8884; }
footer { color: #666; font-size: 0.875rem; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid #8884; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
tfoot th { font-weight: normal; }
tfoot tr.total th, tfoot tr.total td { font-weight: bold; }
label { display: block; margin-top: 0.75rem; font-weight: 600; }
input, textarea { font: inherit; padding: 0.4rem; width: 100%; box-sizing: border-box; }
input.quantity { width: 6rem; }
button { font: inherit; font-weight: 600; margin-top: 1rem; padding: 0.6rem 1.2rem; cursor: pointer; }
:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
.description { white-space: pre-line; }
.alert { border: 2px solid #b00020; padding: 0.75rem; border-radius: 4px; }
.notice { border: 2px solid #1a7f37; padding: 0.75rem; border-radius: 4px; }
.sandbox { border: 2px dashed #b26a00; padding: 0.75rem; border-radius: 4px; margin-top: 1rem; }
code { word-break: break-all; font-size: 1rem; }
dt { font-weight: 600; margin-top: 0.5rem; }
dd { margin: 0; }
.qr { display: block; max-width: 100%; height: auto; margin: 1rem 0; }
.warning { border-left: 4px solid #b26a00; padding-left: 0.75rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`

/** A whole page: a banner saying when its money is the sandbox's, the main content, and a footer. */
export function layout(title: string, main: Html, environment: 'sandbox' | 'live' | undefined): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${new Html(STYLE)}</style>
<script src="${PAGE_SCRIPT_PATH}" defer></script>
</head>
<body>
<header><p><strong>devplatform checkout</strong>${environment === 'sandbox' ? ' — sandbox: no real money moves' : ''}</p></header>
<main id="main">
${main}
</main>
<footer><p>Payments are made in stablecoins on Base.</p></footer>
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
