import { type Currency, formatAmount } from '../../ledger/amount.js'
import { type AccountSummary, applicationAccounts, dailyChanges } from '../../ledger/statements.js'
import { lineChart, SERIES_COLORS, type Series } from './charts.js'
import { consolePage, type Html, html, scrollingTable } from './html.js'
import type { Answer, PageContext } from './page-context.js'

const CHART_DAYS = 30
const DAY_MS = 86_400_000

/** An amount as an owner reads it: the currency's decimals without trailing zeros past the cent. */
export function money(units: bigint, currency: string): string {
  const text = formatAmount(units, currency as Currency).replace(/(\.\d\d\d*?)0+$/, '$1')
  return `${text} ${currency.toUpperCase()}`
}

function sum(accounts: readonly AccountSummary[], pick: (account: AccountSummary) => bigint): bigint {
  return accounts.reduce((total, account) => total + pick(account), 0n)
}

/** Each currency's posted wallet balance at the end of each of the last CHART_DAYS days, walked back from today's. */
export async function balanceSeries(context: PageContext, wallets: readonly AccountSummary[], now: number): Promise<{ labels: string[]; series: Series[] }> {
  const labels = Array.from({ length: CHART_DAYS }, (_, index) => new Date(now - (CHART_DAYS - 1 - index) * DAY_MS).toISOString().slice(0, 10))
  const changes = await dailyChanges(context.app.db, context.environment, context.session.appId, 'wallet', labels[0] ?? '')
  const currencies = [...new Set(wallets.map((wallet) => wallet.currency))]
  const series = currencies.map((currency, index): Series => {
    const days = changes.get(currency) ?? new Map<string, bigint>()
    const values: bigint[] = []
    let balance = sum(
      wallets.filter((wallet) => wallet.currency === currency),
      (wallet) => wallet.posted,
    )
    for (let day = labels.length - 1; day >= 0; day -= 1) {
      values.unshift(balance)
      balance -= days.get(labels[day] ?? '') ?? 0n
    }
    return { name: currency.toUpperCase(), color: SERIES_COLORS[index % SERIES_COLORS.length] ?? '#1d4ed8', values }
  })
  return { labels, series }
}

function accountTable(caption: string, accounts: readonly AccountSummary[], what: (account: AccountSummary) => string): Html {
  if (accounts.length === 0) return html`<div class="table-scroll"><p class="empty">${caption}: none yet.</p></div>`
  return scrollingTable(caption, html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">Account</th><th scope="col">Currency</th><th scope="col" class="number">Available</th><th scope="col" class="number">Incoming</th><th scope="col" class="number">Outgoing</th></tr></thead>
<tbody>${accounts.map(
    (account) =>
      html`<tr><th scope="row">${what(account)}</th><td>${account.currency.toUpperCase()}</td><td class="number">${money(account.available, account.currency)}</td><td class="number">${money(account.pendingIncoming, account.currency)}</td><td class="number">${money(account.pendingOutgoing, account.currency)}</td></tr>`,
  )}</tbody></table>`)
}

export async function overviewPage(context: PageContext): Promise<Answer> {
  const accounts = await applicationAccounts(context.app.db, context.environment, context.session.appId)
  const wallets = accounts.filter((account) => account.kind === 'wallet')
  const fees = accounts.filter((account) => account.kind === 'developer_fee')
  const held = accounts.filter((account) => account.kind === 'clearing' && (account.available !== 0n || account.pendingIncoming !== 0n || account.pendingOutgoing !== 0n))
  const currencies = [...new Set([...wallets, ...fees].map((account) => account.currency))]
  const cards = currencies.map((currency) => {
    const mine = wallets.filter((wallet) => wallet.currency === currency)
    const fee = sum(
      fees.filter((account) => account.currency === currency),
      (account) => account.posted,
    )
    return html`<section class="card" aria-label="${currency.toUpperCase()} balance"><h3>${currency.toUpperCase()} available</h3><p class="amount">${money(sum(mine, (wallet) => wallet.available), currency)}</p>
<p>Incoming ${money(sum(mine, (wallet) => wallet.pendingIncoming), currency)}</p><p>Developer fees collected ${money(fee, currency)}</p></section>`
  })
  const chart = await balanceSeries(context, wallets, Date.now())
  const main = html`${currencies.length === 0 ? html`<div class="panel"><p>No money has moved in this environment yet.</p></div>` : html`<div class="cards">${cards}</div>`}
<h2>Balance over the last ${CHART_DAYS} days</h2>
<div class="panel">${chart.series.length === 0 ? html`<p class="empty">Nothing to draw yet.</p>` : lineChart(`Wallet balance per currency, ${chart.labels[0] ?? ''} to ${chart.labels[chart.labels.length - 1] ?? ''}`, chart.labels, chart.series)}</div>
<h2>Wallets</h2>
${accountTable('Balances per wallet', wallets, (account) => `Wallet on ${account.reference}`)}
<h2>Developer fee account</h2>
${accountTable('Fees collected', fees, (account) => `Fees (${account.reference})`)}
${held.length === 0 ? '' : html`<h2>Held in clearing</h2>${accountTable('Money on its way or held', held, (account) => `Clearing ${account.reference}`)}`}`
  return { status: 200, body: consolePage('Overview', await context.frame('', ''), main) }
}
