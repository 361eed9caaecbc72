import { expect } from 'vitest'
import type { Transfer } from '../../../src/resources/transfers/schemas.js'
import type { TestKey, TestServer } from '../../helper.js'

/** Where a transfer ends when nothing more follows. */
export const TERMINAL = new Set(['payment_processed', 'undeliverable', 'refunded', 'error', 'canceled'])

export interface Wallet {
  id: string
  chain: string
  address: string
}

export async function walletsOf(server: TestServer, key: TestKey): Promise<Wallet[]> {
  const read = await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key })
  expect(read.status, read.text).toBe(200)
  return read.body.data
}

export async function baseWallet(server: TestServer, key: TestKey): Promise<Wallet> {
  return (await walletsOf(server, key)).find((wallet) => wallet.chain === 'base') as Wallet
}

/** Waits until the transfer (or payment intent, by `base`) reaches a terminal state, or one of `states`. */
export async function settled(server: TestServer, key: TestKey, id: string, base = '/api/v0/transfers', states: ReadonlySet<string> = TERMINAL): Promise<Transfer> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const read = await server.request<Transfer>('GET', `${base}/${id}`, { key })
    expect(read.status, read.text).toBe(200)
    if (states.has(read.body.state)) return read.body
    if (Date.now() > deadline) throw new Error(`${id} is still ${read.body.state}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Puts `amount` of `currency` into the wallet by a direct-wallet transfer whose funds arrive, taken to payment_processed. */
export async function fund(server: TestServer, key: TestKey, walletId: string, amount: string, currency = 'usdc'): Promise<void> {
  const created = await server.request<Transfer>('POST', '/api/v0/transfers/direct-wallet', { key, body: { walletId, network: 'base', stableCoinCurrency: currency, amount } })
  expect(created.status, created.text).toBe(201)
  const arrived = await server.request<Transfer>('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key })
  expect(arrived.status, arrived.text).toBe(200)
  expect((await settled(server, key, created.body.id)).state).toBe('payment_processed')
}

export interface BalanceLine {
  wallet_id?: string
  balance: string
  pending_outgoing?: string
  pending_incoming?: string
}

/** The wallet's available balance in `currency`, from GET /balance/<currency>. */
export async function available(server: TestServer, key: TestKey, walletId: string, currency = 'usdc'): Promise<string> {
  const read = await server.request<{ balances: (BalanceLine & Record<string, unknown>)[] }>('GET', `/api/v0/balance/${currency}`, { key })
  expect(read.status, read.text).toBe(200)
  const line = read.body.balances.find((entry) => Object.values(entry).includes(walletId))
  return line?.balance ?? '0.000000'
}
