import { beforeAll, describe, expect, it } from 'vitest'
import { ExchangeRates } from '../../../src/ledger/rates.js'
import { advanceDrain } from '../../../src/resources/drains/lifecycle.js'
import { DEFAULT_SCOPES } from '../../../src/resources/index.js'
import { advanceTransfer } from '../../../src/resources/transfers/lifecycle.js'
import { WalletsRepository } from '../../../src/resources/wallets/repository.js'
import { A_UUID, A_VALID_DATE, call, clientWith, type GeneratedClient, key, newCustomer, newLiquidationAddress, server } from '../../openapi/generated-client.js'

const later = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 1, achDelayMs: 1 }, now: () => Date.now() + 3_600_000 }
const by = { by: 'ada@ops', reason: 'generated client' }

export function generatedClientCases(): void {
  describe('held', () => {
    /** sandbox money, and the opt-in held scopes: a development key of the same application that names them */
    let operator: GeneratedClient
    let walletId: string
    let sandboxHeaders: Record<string, string>
    beforeAll(async () => {
      const sandboxKey = await server.createKey({ appId: key.appId, environment: 'development', scopes: [...DEFAULT_SCOPES, 'held:read', 'held:manage'] })
      sandboxHeaders = sandboxKey.headers
      operator = await clientWith(sandboxKey)
      const [wallet] = await server.app.transact((tx) => new WalletsRepository(tx.db).ensure('sandbox', key.appId))
      walletId = wallet?.id ?? ''
    })

    /** A sandbox drain of 13.03 (error), its funds held. */
    async function heldDrain(): Promise<string> {
      const customer = await newCustomer()
      const address = await newLiquidationAddress(customer.id)
      const res = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.id}/liquidation_addresses/${address.id}/simulate_deposit`, { headers: sandboxHeaders, body: { amount: '13.03' } })
      expect(res.status).toBe(201)
      await server.app.transact((tx) => advanceDrain(tx, later, res.body.id))
      return res.body.id
    }

    /** A sandbox direct-wallet transfer of 13.03 (error) whose funds arrived, held. */
    async function heldTransfer(): Promise<string> {
      const res = await server.request<{ id: string }>('POST', '/api/v0/transfers/direct-wallet', { headers: sandboxHeaders, body: { walletId, network: 'base', stableCoinCurrency: 'usdc', amount: 13.03 } })
      expect(res.status).toBe(201)
      expect((await server.request('POST', `/api/v0/transfers/${res.body.id}/simulate_funds`, { headers: sandboxHeaders, body: {} })).status).toBe(200)
      await server.app.transact((tx) => advanceTransfer(tx, later, res.body.id))
      return res.body.id
    }

    const ACTION = { id: A_UUID, amount: '13.030000', currency: 'usdc', by: by.by, reason: by.reason, livemode: false, created_at: A_VALID_DATE }

    it('heldControllerFindAll: GET /held', async () => {
      const id = await heldDrain()
      const { data, response } = await call('heldControllerFindAll', { client: operator })
      expect(response.status).toBe(200)
      expect((data as { data: unknown[] }).data).toContainEqual(expect.objectContaining({ type: 'drain', id, state: 'error', actions: ['retry', 'refund', 'release'], held_since: A_VALID_DATE }))
    })

    it('heldControllerFindActions: GET /held/actions', async () => {
      const { data, response } = await call('heldControllerFindActions', { client: operator })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: expect.any(Array) })
    })

    it('heldControllerRetryDrain: POST /held/drains/{heldDrainId}/retry', async () => {
      const drainId = await heldDrain()
      const { data, response } = await call('heldControllerRetryDrain', { client: operator, path: { heldDrainId: drainId }, body: by })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...ACTION, target_type: 'drain', target_id: drainId, action: 'retry', to_state: 'payment_submitted' })
    })

    it('heldControllerRefundDrain: POST /held/drains/{heldDrainId}/refund', async () => {
      const drainId = await heldDrain()
      const { data, response } = await call('heldControllerRefundDrain', { client: operator, path: { heldDrainId: drainId }, body: { ...by, return_address: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...ACTION, action: 'refund', to_state: 'refunded' })
    })

    it('heldControllerReleaseDrain: POST /held/drains/{heldDrainId}/release', async () => {
      const drainId = await heldDrain()
      const { data, response } = await call('heldControllerReleaseDrain', { client: operator, path: { heldDrainId: drainId }, body: { ...by, wallet_id: walletId } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...ACTION, action: 'release', to_state: 'released', wallet_id: walletId })
    })

    it('heldControllerRetryTransfer: POST /held/transfers/{heldTransferId}/retry', async () => {
      const transferId = await heldTransfer()
      const { data, response } = await call('heldControllerRetryTransfer', { client: operator, path: { heldTransferId: transferId }, body: by })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...ACTION, target_type: 'transfer', action: 'retry', to_state: 'payment_submitted' })
    })

    it('heldControllerRefundTransfer: POST /held/transfers/{heldTransferId}/refund', async () => {
      const transferId = await heldTransfer()
      const { data, response } = await call('heldControllerRefundTransfer', { client: operator, path: { heldTransferId: transferId }, body: { ...by, return_address: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...ACTION, action: 'refund', to_state: 'refunded' })
    })

    it('heldControllerReleaseTransfer: POST /held/transfers/{heldTransferId}/release', async () => {
      const transferId = await heldTransfer()
      const { data, response } = await call('heldControllerReleaseTransfer', { client: operator, path: { heldTransferId: transferId }, body: { ...by, wallet_id: walletId } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...ACTION, action: 'release', to_state: 'released' })
    })
  })
}
