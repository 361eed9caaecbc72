import { beforeAll, describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, clientWith, type Fixture, type GeneratedClient, server } from '../../openapi/generated-client.js'
import type { TestKey } from '../../helper.js'

/** a transfer as the API answers it; a payment intent is one too */
export const TRANSFER_SHAPE = { id: A_UUID, type: expect.any(String), state: expect.any(String), currency: expect.any(String), source: expect.any(Object), destination: expect.any(Object), receipt: expect.any(Object), created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

export function generatedClientCases(): void {
  describe('transfers', () => {
    /** sandbox money: a client of the same generated code with a development key */
    let sandbox: GeneratedClient
    let sandboxKey: TestKey
    let walletId: string
    beforeAll(async () => {
      sandboxKey = await server.createKey({ environment: 'development' })
      sandbox = await clientWith(sandboxKey)
      const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key: sandboxKey })
      walletId = wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? ''
      // Money to move out: a test payment credits the base wallet's USDC.
      const paid = await server.request('POST', '/api/v0/test-payment', { key: sandboxKey, body: { amount: 100, currency: 'USD', description: 'funds' }, headers: { 'idempotency-key': crypto.randomUUID() } })
      expect(paid.status).toBe(201)
    })
    const awaiting = async (base: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Fixture> => {
      const res = await server.request<Fixture>('POST', base, { key: sandboxKey, body, headers })
      expect(res.status).toBe(201)
      return res.body
    }
    const newTransfer = () => awaiting('/api/v0/transfers/direct-wallet', { walletId, network: 'base', stableCoinCurrency: 'usdc', amount: 1 })

    it('transferControllerCreateDirectBankTransfer: POST /transfers/direct-bank, the amount a JSON number', async () => {
      const { data, response } = await call('transferControllerCreateDirectBankTransfer', { client: sandbox, body: { walletId, paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 100.25 } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'awaiting_funds', amount: '100.25', source_deposit_instructions: expect.objectContaining({ payment_rail: 'wire' }) })
    })

    it('transferControllerCreateDirectWalletTransfer: POST /transfers/direct-wallet', async () => {
      const { data, response } = await call('transferControllerCreateDirectWalletTransfer', { client: sandbox, body: { walletId, network: 'ethereum', stableCoinCurrency: 'usdc', amount: 5 } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'awaiting_funds', amount: '5.000000' })
    })

    it('transferControllerCreateExternalBankTransfer: POST /transfers/external-bank-transfer', async () => {
      const { data, response } = await call('transferControllerCreateExternalBankTransfer', {
        client: sandbox,
        body: { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: 'ach', external_account_id: 'ext_acct_1', amount: 2 },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'funds_received', amount: '2.000000' })
    })

    it('transferControllerCreateExternalStablecoinTransfer: POST /transfers/external-stablecoin-transfer', async () => {
      const { data, response } = await call('transferControllerCreateExternalStablecoinTransfer', {
        client: sandbox,
        body: { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_12345', amount: 2 },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'funds_received' })
    })

    it('transferControllerCreateStablecoinConversion: POST /transfers/stablecoin-conversion', async () => {
      const { data, response } = await call('transferControllerCreateStablecoinConversion', { client: sandbox, body: { walletId, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 10 } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, receipt: expect.objectContaining({ exchange_rate: '0.84500', converted_amount: '8.450000' }) })
    })

    it('transferControllerFindAll: GET /transfers', async () => {
      await newTransfer()
      const { data, response } = await call('transferControllerFindAll', { client: sandbox, query: { state: 'awaiting_funds', take: 5 } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ data: expect.arrayContaining([expect.objectContaining(TRANSFER_SHAPE)]), skip: 0, take: 5 })
    })

    it('transferControllerFindOne: GET /transfers/{id}', async () => {
      const transfer = await newTransfer()
      const { data, response } = await call('transferControllerFindOne', { client: sandbox, path: { id: transfer.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, id: transfer.id })
    })

    it('transferControllerCancel: DELETE /transfers/{id}', async () => {
      const transfer = await newTransfer()
      const { data, response } = await call('transferControllerCancel', { client: sandbox, path: { id: transfer.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ id: transfer.id, state: 'canceled' })
    })

    it('transferControllerSimulateFunds: POST /transfers/{id}/simulate_funds', async () => {
      const transfer = await newTransfer()
      const { data, response } = await call('transferControllerSimulateFunds', { client: sandbox, path: { id: transfer.id }, body: { amount: 1 } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ id: transfer.id, state: 'funds_received' })
    })
  })
}
