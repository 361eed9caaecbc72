import { ExchangeRates } from '../../../src/ledger/rates.js'
import { advanceDrain } from '../../../src/resources/drains/lifecycle.js'
import { advanceTransfer } from '../../../src/resources/transfers/lifecycle.js'
import { heldManifest } from '../../../src/resources/held/manifest.js'
import { created, defineSecurityKit, type FixtureContext } from '../../auth/security-kit.js'

const later = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 1, achDelayMs: 1 }, now: () => Date.now() + 3_600_000 }

/** A sandbox drain of `amount` (13.03: error) at the kit's liquidation address, moved on to where it is held. */
async function heldDrain({ server, sandboxKey, made }: FixtureContext, amount: string): Promise<string> {
  const id = await created(server, sandboxKey, `/api/v0/customers/${made.id('customer')}/liquidation_addresses/${made.id('liquidationAddress')}/simulate_deposit`, { amount })
  await server.app.transact((tx) => advanceDrain(tx, later, id))
  return id
}

/** A sandbox direct-wallet transfer of 13.03 USDC (error) whose funds arrived, moved on to where it is held. */
async function heldTransfer({ server, sandboxKey, made }: FixtureContext): Promise<string> {
  const id = await created(server, sandboxKey, '/api/v0/transfers/direct-wallet', { walletId: made.id('sandboxWallet'), network: 'base', stableCoinCurrency: 'usdc', amount: 13.03 })
  const funded = await server.request('POST', `/api/v0/transfers/${id}/simulate_funds`, { key: sandboxKey, body: {} })
  if (funded.status !== 200) throw new Error(`simulate_funds: ${funded.status}`)
  await server.app.transact((tx) => advanceTransfer(tx, later, id))
  return id
}

const drainNotFound = { notFound: 'Drain not found', readBack: 'heldControllerFindAll' }
const transferNotFound = { notFound: 'Transfer not found', readBack: 'heldControllerFindAll' }
const by = { by: 'ada@ops', reason: 'security kit' }

export const securityKit = defineSecurityKit(heldManifest, {
  /** a drain and a transfer in error, their funds held */
  fixtures: async (context) => ({ heldDrain: await heldDrain(context, '13.03'), heldTransfer: await heldTransfer(context) }),
  params: { heldDrainId: 'heldDrain', heldTransferId: 'heldTransfer' },
  environment: 'development',
  operations: {
    heldControllerRetryDrain: { body: () => by, tenancy: drainNotFound },
    heldControllerRefundDrain: { body: () => ({ ...by, return_address: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb' }), tenancy: drainNotFound },
    heldControllerReleaseDrain: { body: (fixtures) => ({ ...by, wallet_id: fixtures.id('sandboxWallet') }), tenancy: drainNotFound },
    heldControllerRetryTransfer: { body: () => by, tenancy: transferNotFound },
    heldControllerRefundTransfer: { body: () => ({ ...by, return_address: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb' }), tenancy: transferNotFound },
    heldControllerReleaseTransfer: { body: (fixtures) => ({ ...by, wallet_id: fixtures.id('sandboxWallet') }), tenancy: transferNotFound },
  },
})
