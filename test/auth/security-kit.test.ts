import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATIONS, SCOPES } from '../../src/resources/index.js'
import { ANY_VALID_KEY, PUBLIC } from '../../src/resources/manifest.js'
import type { Environment } from '../../src/keys/credentials.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * One security kit, run against every authenticated route: no headers, wrong secret, unknown
 * key, inactive key, missing scope, and another application's resource answering exactly like
 * a missing one (404).
 */
interface Ids {
  webhook: string
  /** the webhook's own webhook.created delivery, ended (failed) so it can be resent */
  delivery: string
  customer: string
  liquidationAddress: string
  tax: string
  /** a sandbox drain at the liquidation address */
  drain: string
  product: string
  /** a DONATION payment link */
  paymentLink: string
  /** an OPEN invoice of the customer for the product */
  invoice: string
  /** a sandbox test payment, not refunded */
  testPayment: string
  /** the application's sandbox base wallet, holding the test payment's USDC */
  sandboxWallet: string
  /** a sandbox direct-wallet transfer awaiting funds */
  transfer: string
  /** a sandbox stablecoin payment intent awaiting funds */
  paymentIntent: string
}

interface RouteCase {
  method: string
  path: (ids: Ids) => string
  /** the operation this case calls: its scope comes from the resource's manifest */
  operationId: string
  body?: (ids: Ids) => unknown
  /** the 404 message when the ids belong to another application; absent for collection routes */
  otherTenant?: string
  /** where the owner reads the resource back, to prove the other application's call changed nothing */
  readBack?: (ids: Ids) => string
  /** the environment of the keys that may call it (sandbox money needs a development key); production by default */
  environment?: Environment
  /** headers the operation needs besides the key's (a fresh idempotency-key where it is required) */
  headers?: () => Record<string, string>
  /** the environment of the owner's key that reads the resource back; production by default */
  readBackEnvironment?: Environment
}

const readWebhook = (ids: Ids) => `/api/v0/webhooks/${ids.webhook}`
const readCustomer = (ids: Ids) => `/api/v0/customers/${ids.customer}`
const readTax = (ids: Ids) => `/api/v0/taxes/${ids.tax}`
const readSecret = (ids: Ids) => `/api/v0/webhooks/${ids.webhook}/secret`
const readDelivery = (ids: Ids) => `/api/v0/webhooks/${ids.webhook}/deliveries/${ids.delivery}`
const readProduct = (ids: Ids) => `/api/v0/products/${ids.product}`
const readPaymentLink = (ids: Ids) => `/api/v0/payment-links/${ids.paymentLink}`
/** A DONATION link's whole create body, its url a slug no other call uses. */
const paymentLinkBody = () => ({ url: `kit-${crypto.randomUUID()}`, title: 't', linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc' })
const readInvoice = (ids: Ids) => `/api/v0/invoices/${ids.invoice}`
/** A whole CreateInvoiceDto (create and PUT take the same body). */
const invoiceBody = (ids: Ids) => ({
  name: 'i',
  email: 'i@example.com',
  customer_id: ids.customer,
  currency: 'usdc',
  items: [{ product_id: ids.product, quantity: 1 }],
  due_date: '2027-01-31T00:00:00.000Z',
  delivery: 'EMAIL',
  payment_link: false,
  payment_methods: ['CRYPTO'],
  status: 'OPEN',
  partial_payment: false,
})
const readTestPayment = (ids: Ids) => `/api/v0/test-payment/${ids.testPayment}`
const idempotencyKey = () => ({ 'idempotency-key': crypto.randomUUID() })

const readTransfers = () => '/api/v0/transfers'
const readTransfer = (ids: Ids) => `/api/v0/transfers/${ids.transfer}`
const readPaymentIntent = (ids: Ids) => `/api/v0/payment-intents/${ids.paymentIntent}`
/** A sandbox transfer route: its money is the development key's, read back by one. */
const sandboxMoney = { environment: 'development', readBackEnvironment: 'development' } as const
const walletNotFound = { otherTenant: 'Bridge wallet not found', readBack: readTransfers, ...sandboxMoney }

const ROUTES: RouteCase[] = [
  { method: 'POST', path: () => '/api/v0/transfers/direct-bank', operationId: 'transferControllerCreateDirectBankTransfer', body: (ids) => ({ walletId: ids.sandboxWallet, paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 1 }), ...walletNotFound },
  { method: 'POST', path: () => '/api/v0/transfers/direct-wallet', operationId: 'transferControllerCreateDirectWalletTransfer', body: (ids) => ({ walletId: ids.sandboxWallet, network: 'base', stableCoinCurrency: 'usdc', amount: 1 }), ...walletNotFound },
  {
    method: 'POST',
    path: () => '/api/v0/transfers/external-bank-transfer',
    operationId: 'transferControllerCreateExternalBankTransfer',
    body: (ids) => ({ sourceWalletId: ids.sandboxWallet, sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: 'ach', external_account_id: 'ext_1', amount: 1 }),
    ...walletNotFound,
  },
  {
    method: 'POST',
    path: () => '/api/v0/transfers/external-stablecoin-transfer',
    operationId: 'transferControllerCreateExternalStablecoinTransfer',
    body: (ids) => ({ sourceWalletId: ids.sandboxWallet, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'b_1', amount: 1 }),
    ...walletNotFound,
  },
  {
    method: 'POST',
    path: () => '/api/v0/transfers/stablecoin-conversion',
    operationId: 'transferControllerCreateStablecoinConversion',
    body: (ids) => ({ walletId: ids.sandboxWallet, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 1 }),
    ...walletNotFound,
  },
  { method: 'GET', path: () => '/api/v0/transfers', operationId: 'transferControllerFindAll', ...sandboxMoney },
  { method: 'GET', path: (ids) => `/api/v0/transfers/${ids.transfer}`, operationId: 'transferControllerFindOne', otherTenant: 'Transfer not found', readBack: readTransfer, ...sandboxMoney },
  { method: 'DELETE', path: (ids) => `/api/v0/transfers/${ids.transfer}`, operationId: 'transferControllerCancel', otherTenant: 'Transfer not found', readBack: readTransfer, ...sandboxMoney },
  { method: 'POST', path: (ids) => `/api/v0/transfers/${ids.transfer}/simulate_funds`, operationId: 'transferControllerSimulateFunds', otherTenant: 'Transfer not found', readBack: readTransfer, ...sandboxMoney },
  {
    method: 'POST',
    path: () => '/api/v0/payment-intents/bank',
    operationId: 'paymentIntentControllerCreateBankPaymentIntent',
    body: () => ({ sourcePaymentRail: 'ach_push', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '1.00' }),
    headers: idempotencyKey,
    ...sandboxMoney,
  },
  {
    method: 'POST',
    path: () => '/api/v0/payment-intents/stablecoin',
    operationId: 'paymentIntentControllerCreateStablePaymentIntent',
    body: () => ({ sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base' }),
    headers: idempotencyKey,
    ...sandboxMoney,
  },
  { method: 'GET', path: () => '/api/v0/payment-intents', operationId: 'paymentIntentControllerFindAll', ...sandboxMoney },
  { method: 'GET', path: (ids) => `/api/v0/payment-intents/${ids.paymentIntent}`, operationId: 'paymentIntentControllerFindOne', otherTenant: 'Payment intent not found', readBack: readPaymentIntent, ...sandboxMoney },
  { method: 'DELETE', path: (ids) => `/api/v0/payment-intents/${ids.paymentIntent}`, operationId: 'paymentIntentControllerCancel', otherTenant: 'Payment intent not found', readBack: readPaymentIntent, ...sandboxMoney },
  {
    method: 'POST',
    path: (ids) => `/api/v0/payment-intents/${ids.paymentIntent}/simulate_funds`,
    operationId: 'paymentIntentControllerSimulateFunds',
    otherTenant: 'Payment intent not found',
    readBack: readPaymentIntent,
    ...sandboxMoney,
  },
  { method: 'GET', path: () => '/api/v0/health', operationId: 'healthControllerCheckV0' },
  { method: 'POST', path: () => '/api/v0/webhooks', operationId: 'webhookControllerCreate', body: () => ({ name: 'w', url: 'https://example.com/hook' }) },
  { method: 'GET', path: () => '/api/v0/webhooks', operationId: 'webhookControllerFindAll' },
  { method: 'GET', path: (ids) => `/api/v0/webhooks/${ids.webhook}`, operationId: 'webhookControllerFindOne', otherTenant: 'Webhook not found', readBack: readWebhook },
  { method: 'PATCH', path: (ids) => `/api/v0/webhooks/${ids.webhook}`, operationId: 'webhookControllerUpdate', body: () => ({ name: 'x' }), otherTenant: 'Webhook not found', readBack: readWebhook },
  { method: 'DELETE', path: (ids) => `/api/v0/webhooks/${ids.webhook}`, operationId: 'webhookControllerRemove', otherTenant: 'Webhook not found', readBack: readWebhook },
  { method: 'GET', path: (ids) => `/api/v0/webhooks/${ids.webhook}/secret`, operationId: 'webhookControllerGetSecret', otherTenant: 'Webhook not found', readBack: readSecret },
  { method: 'POST', path: (ids) => `/api/v0/webhooks/${ids.webhook}/secret/rotate`, operationId: 'webhookControllerRotateSecret', otherTenant: 'Webhook not found', readBack: readSecret },
  { method: 'GET', path: (ids) => `/api/v0/webhooks/${ids.webhook}/deliveries`, operationId: 'webhookControllerFindDeliveries', otherTenant: 'Webhook not found', readBack: readDelivery },
  { method: 'GET', path: (ids) => `/api/v0/webhooks/${ids.webhook}/deliveries/${ids.delivery}`, operationId: 'webhookControllerFindDelivery', otherTenant: 'Webhook not found', readBack: readDelivery },
  {
    method: 'POST',
    path: (ids) => `/api/v0/webhooks/${ids.webhook}/deliveries/${ids.delivery}/retry`,
    operationId: 'webhookControllerRetryDelivery',
    otherTenant: 'Webhook not found',
    readBack: readDelivery,
  },
  { method: 'POST', path: (ids) => `/api/v0/webhooks/${ids.webhook}/test`, operationId: 'webhookControllerSendTest', otherTenant: 'Webhook not found', readBack: readWebhook },
  { method: 'POST', path: () => '/api/v0/customers', operationId: 'customerControllerCreate', body: () => ({ first_name: 'A', last_name: 'B', phone_number: '1' }) },
  { method: 'GET', path: () => '/api/v0/customers', operationId: 'customerControllerFindAll' },
  { method: 'GET', path: (ids) => `/api/v0/customers/${ids.customer}`, operationId: 'customerControllerFindOne', otherTenant: 'Customer not found', readBack: readCustomer },
  { method: 'PATCH', path: (ids) => `/api/v0/customers/${ids.customer}`, operationId: 'customerControllerUpdate', body: () => ({ first_name: 'Z' }), otherTenant: 'Customer not found', readBack: readCustomer },
  {
    method: 'POST',
    path: (ids) => `/api/v0/customers/${ids.customer}/liquidation_addresses`,
    operationId: 'liquidationAddressControllerCreateLiquidationAddress',
    body: () => ({ chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' }),
    otherTenant: 'Customer not found',
    readBack: readCustomer,
  },
  {
    method: 'GET',
    path: (ids) => `/api/v0/customers/${ids.customer}/liquidation_addresses`,
    operationId: 'liquidationAddressControllerGetLiquidationAddresses',
    otherTenant: 'Customer not found',
    readBack: readCustomer,
  },
  {
    method: 'GET',
    path: (ids) => `/api/v0/customers/${ids.customer}/liquidation_addresses/${ids.liquidationAddress}`,
    operationId: 'liquidationAddressControllerGetLiquidationAddress',
    otherTenant: 'Customer not found',
    readBack: readCustomer,
  },
  { method: 'POST', path: () => '/api/v0/taxes', operationId: 'taxControllerCreate', body: () => ({ name: 't', percentage: 5 }) },
  { method: 'GET', path: () => '/api/v0/taxes', operationId: 'taxControllerFindAll' },
  { method: 'GET', path: (ids) => `/api/v0/taxes/${ids.tax}`, operationId: 'taxControllerFindOne', otherTenant: 'Tax not found', readBack: readTax },
  { method: 'PUT', path: (ids) => `/api/v0/taxes/${ids.tax}`, operationId: 'taxControllerUpdate', body: () => ({ name: 'u' }), otherTenant: 'Tax not found', readBack: readTax },
  { method: 'DELETE', path: (ids) => `/api/v0/taxes/${ids.tax}`, operationId: 'taxControllerRemove', otherTenant: 'Tax not found', readBack: readTax },
  { method: 'POST', path: () => '/api/v0/products', operationId: 'productControllerCreate', body: () => ({ name: 'p', price: '1.00' }) },
  { method: 'GET', path: () => '/api/v0/products', operationId: 'productControllerFindAll' },
  { method: 'GET', path: (ids) => `/api/v0/products/${ids.product}`, operationId: 'productControllerFindOne', otherTenant: 'Product not found', readBack: readProduct },
  { method: 'PUT', path: (ids) => `/api/v0/products/${ids.product}`, operationId: 'productControllerUpdate', body: () => ({ name: 'u' }), otherTenant: 'Product not found', readBack: readProduct },
  { method: 'DELETE', path: (ids) => `/api/v0/products/${ids.product}`, operationId: 'productControllerRemove', otherTenant: 'Product not found', readBack: readProduct },
  { method: 'POST', path: () => '/api/v0/payment-links', operationId: 'paymentLinksControllerCreate', body: paymentLinkBody },
  { method: 'GET', path: () => '/api/v0/payment-links?skip=0&take=10', operationId: 'paymentLinksControllerFindAll' },
  { method: 'GET', path: (ids) => `/api/v0/payment-links/${ids.paymentLink}`, operationId: 'paymentLinksControllerFindOne', otherTenant: 'Payment link not found', readBack: readPaymentLink },
  { method: 'PUT', path: (ids) => `/api/v0/payment-links/${ids.paymentLink}`, operationId: 'paymentLinksControllerUpdate', body: () => ({ title: 'u' }), otherTenant: 'Payment link not found', readBack: readPaymentLink },
  { method: 'POST', path: () => '/api/v0/invoices', operationId: 'invoiceControllerCreate', body: invoiceBody },
  { method: 'GET', path: () => '/api/v0/invoices', operationId: 'invoiceControllerFindAll' },
  { method: 'GET', path: (ids) => `/api/v0/invoices/${ids.invoice}`, operationId: 'invoiceControllerFindOne', otherTenant: 'Invoice not found', readBack: readInvoice },
  { method: 'PUT', path: (ids) => `/api/v0/invoices/${ids.invoice}`, operationId: 'invoiceControllerUpdate', body: (ids) => ({ ...invoiceBody(ids), name: 'u' }), otherTenant: 'Invoice not found', readBack: readInvoice },
  {
    method: 'POST',
    path: (ids) => `/api/v0/products/${ids.product}/images`,
    operationId: 'productControllerUploadImage',
    body: () => ({ images: ['https://example.com/p.png'] }),
    otherTenant: 'Product not found',
    readBack: readProduct,
  },
  {
    method: 'POST',
    path: (ids) => `/api/v0/customers/${ids.customer}/liquidation_addresses/${ids.liquidationAddress}/simulate_deposit`,
    operationId: 'drainControllerSimulateDeposit',
    body: () => ({ amount: '1.5' }),
    otherTenant: 'Customer not found',
    readBack: readCustomer,
    environment: 'development',
  },
  {
    method: 'GET',
    path: (ids) => `/api/v0/customers/${ids.customer}/liquidation_addresses/${ids.liquidationAddress}/drains`,
    operationId: 'drainControllerFindAll',
    otherTenant: 'Customer not found',
    readBack: readCustomer,
    environment: 'development',
  },
  {
    method: 'GET',
    path: (ids) => `/api/v0/customers/${ids.customer}/liquidation_addresses/${ids.liquidationAddress}/drains/${ids.drain}`,
    operationId: 'drainControllerFindOne',
    otherTenant: 'Customer not found',
    readBack: readCustomer,
    environment: 'development',
  },
  { method: 'GET', path: () => '/api/v0/wallets', operationId: 'walletControllerGetWallets' },
  { method: 'GET', path: () => '/api/v0/balance', operationId: 'balanceControllerGetAllBalances' },
  { method: 'GET', path: () => '/api/v0/balance/usdc', operationId: 'balanceControllerGetUSDCBalance' },
  { method: 'GET', path: () => '/api/v0/balance/eurc', operationId: 'balanceControllerGetEURCBalance' },
  // The sandbox always has a rate (its defaults); live answers 503 until an operator loads one.
  { method: 'GET', path: () => '/api/v0/exchange-rate?from=usd&to=eur', operationId: 'exchangeRateControllerGetExchangeRate', environment: 'development' },
  { method: 'GET', path: () => '/api/v0/exchange-rate/eur-to-usd', operationId: 'exchangeRateControllerGetEURToUSDRate', environment: 'development' },
  { method: 'GET', path: () => '/api/v0/exchange-rate/usd-to-eur', operationId: 'exchangeRateControllerGetUSDToEURRate', environment: 'development' },
  // Test payments are sandbox money: development keys only; another application's payment is 404 to any key.
  {
    method: 'POST',
    path: () => '/api/v0/test-payment',
    operationId: 'testPaymentControllerCreatePaymentV0',
    body: () => ({ amount: 1, currency: 'USD', description: 'd' }),
    headers: idempotencyKey,
    environment: 'development',
  },
  {
    method: 'GET',
    path: (ids) => `/api/v0/test-payment/${ids.testPayment}`,
    operationId: 'testPaymentControllerGetPaymentV0',
    otherTenant: 'Test payment not found',
    readBack: readTestPayment,
    environment: 'development',
    readBackEnvironment: 'development',
  },
  {
    method: 'POST',
    path: (ids) => `/api/v0/test-payment/${ids.testPayment}/refund`,
    operationId: 'testPaymentControllerRefundPaymentV0',
    headers: idempotencyKey,
    otherTenant: 'Test payment not found',
    readBack: readTestPayment,
    environment: 'development',
    readBackEnvironment: 'development',
  },
]

let server: TestServer
let owner: TestKey
let other: TestKey
let inactive: TestKey
let ids: Ids

async function newProduct(key: TestKey): Promise<string> {
  const product = await server.request<{ id: string }>('POST', '/api/v0/products', { key, body: { name: 'p', price: '1.00' } })
  expect(product.status).toBe(201)
  return product.body.id
}

async function newPaymentLink(key: TestKey): Promise<string> {
  const link = await server.request<{ id: string }>('POST', '/api/v0/payment-links', { key, body: paymentLinkBody() })
  expect(link.status).toBe(201)
  return link.body.id
}

/** The resources, and an OPEN invoice of their customer for their product. */
async function createResources(key: TestKey): Promise<Ids> {
  const resources = await createResourcesButInvoice(key)
  const invoice = await server.request<{ id: string }>('POST', '/api/v0/invoices', { key, body: invoiceBody({ ...resources, invoice: '' }) })
  expect(invoice.status).toBe(201)
  return { ...resources, invoice: invoice.body.id }
}

async function createResourcesButInvoice(key: TestKey): Promise<Omit<Ids, 'invoice'>> {
  // One active webhook at a time: past INLINE_FANOUT_MAX active webhooks an event's deliveries wait
  // for a dispatcher's fan-out (none runs here), and the delivery taken below would not exist yet.
  await server.app.db.updateTable('webhooks').set({ is_active: 0 }).where('app_id', '=', key.appId).execute()
  const webhook = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'w', url: 'https://example.com/h' } })
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'A', last_name: 'B', phone_number: '1' } })
  const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
    key,
    body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' },
  })
  const tax = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: { name: 't', percentage: 1 } })
  expect([webhook.status, customer.status, address.status, tax.status]).toEqual([201, 201, 201, 201])
  // No dispatcher here: end the webhook's own webhook.created delivery as a failed one would end.
  const delivery = await server.app.db
    .updateTable('deliveries')
    .set({ status: 'failed', attempts: 1 })
    .where('webhook_id', '=', webhook.body.id)
    .returning('id')
    .executeTakeFirstOrThrow()
  const sandbox = await server.createKey({ appId: key.appId, environment: 'development' })
  const drain = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, { key: sandbox, body: { amount: '2' } })
  expect(drain.status).toBe(201)
  const testPayment = await server.request<{ id: string }>('POST', '/api/v0/test-payment', { key: sandbox, body: { amount: 2, currency: 'USD', description: 'd' }, headers: idempotencyKey() })
  expect(testPayment.status).toBe(201)
  const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key: sandbox })
  const sandboxWallet = wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? ''
  const transfer = await server.request<{ id: string }>('POST', '/api/v0/transfers/direct-wallet', { key: sandbox, body: { walletId: sandboxWallet, network: 'base', stableCoinCurrency: 'usdc', amount: 1 } })
  const paymentIntent = await server.request<{ id: string }>('POST', '/api/v0/payment-intents/stablecoin', {
    key: sandbox,
    body: { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '1' },
    headers: idempotencyKey(),
  })
  expect([transfer.status, paymentIntent.status]).toEqual([201, 201])
  return {
    webhook: webhook.body.id,
    delivery: delivery.id,
    customer: customer.body.id,
    liquidationAddress: address.body.id,
    tax: tax.body.id,
    drain: drain.body.id,
    product: await newProduct(key),
    paymentLink: await newPaymentLink(key),
    testPayment: testPayment.body.id,
    sandboxWallet,
    transfer: transfer.body.id,
    paymentIntent: paymentIntent.body.id,
  }
}

beforeAll(async () => {
  // No drain scheduler: a fixture drain moving on would emit events that change a webhook read back between its two reads.
  server = await startTestServer({ config: { drains: { scheduler: false, fastDelayMs: 1_000, achDelayMs: 3_000, pollIntervalMs: 250, concurrency: 4 } } })
  owner = await server.createKey()
  other = await server.createKey()
  inactive = await server.createKey({ appId: owner.appId })
  await server.deactivate(inactive)
  ids = await createResources(owner)
})
afterAll(async () => server.close())

const OPERATION_BY_ID = new Map([...OPERATIONS.values()].map((operation) => [operation.operationId, operation]))

/** The scope the manifest gives the case's operation; undefined for one any valid key may call. */
function scopeOf(route: RouteCase): string | undefined {
  const scope = OPERATION_BY_ID.get(route.operationId)?.scope
  if (scope === undefined) throw new Error(`${route.operationId} is not an operation of any manifest`)
  return scope === ANY_VALID_KEY ? undefined : scope
}

const SCOPED_ROUTES = ROUTES.filter((route) => scopeOf(route) !== undefined)
const TENANT_ROUTES = ROUTES.filter((route) => route.otherTenant !== undefined)

function send(route: RouteCase, resources: Ids, key: TestKey | null, headers?: Record<string, string>) {
  return server.request(route.method, route.path(resources), {
    key,
    ...(route.body ? { body: route.body(resources) } : {}),
    ...(headers || route.headers ? { headers: { ...route.headers?.(), ...headers } } : {}),
  })
}

describe.each(ROUTES)('$method $path', (route) => {
  it('401 without credentials', async () => {
    const partial: Record<string, string>[] = [{}, { 'x-client-key': owner.clientKey }, { 'x-client-secret': owner.clientSecret }]
    for (const headers of partial) {
      const res = await send(route, ids, null, headers)
      expect(res.status).toBe(401)
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'Client key or secret missing',
        details: expect.stringContaining('x-client-key and x-client-secret'),
      })
      expect(res.headers.get('ratelimit')).toBeNull()
    }
  })

  it('401 with a wrong secret or an unknown key, one body for both', async () => {
    const wrongSecret = await send(route, ids, null, { 'x-client-key': owner.clientKey, 'x-client-secret': `${owner.clientSecret}x` })
    const unknownKey = await send(route, ids, null, { 'x-client-key': 'pk_live_unknown', 'x-client-secret': owner.clientSecret })
    const otherAppsSecret = await send(route, ids, null, { 'x-client-key': owner.clientKey, 'x-client-secret': other.clientSecret })
    for (const res of [wrongSecret, unknownKey, otherAppsSecret]) {
      expect(res.status).toBe(401)
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'Invalid client app credentials',
        details: 'The client key or client secret is invalid',
      })
    }
  })

  it('403 for a deactivated key', async () => {
    const res = await send(route, ids, inactive)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'API key is inactive', details: 'This API key has been deactivated' })
  })
})

describe.each(SCOPED_ROUTES)('$method $path scope', (route) => {
  it('403 naming the scope when the key lacks it; the scope alone is enough', async () => {
    const scope = scopeOf(route) ?? ''
    const without = await server.createKey({ appId: owner.appId, scopes: SCOPES.filter((s) => s !== scope), environment: route.environment })
    const res = await send(route, ids, without)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Missing required scope', details: `This API key lacks the required scope: ${scope}` })
    // Fresh resources, so a write here never disturbs the other cases.
    const only = await server.createKey({ appId: owner.appId, scopes: [scope], environment: route.environment })
    const allowed = await send(route, await createResources(owner), only)
    expect(allowed.status).toBeGreaterThanOrEqual(200)
    expect(allowed.status).toBeLessThan(300)
  })
})

describe.each(TENANT_ROUTES)('$method $path tenancy', (route) => {
  it("answers another application's resource exactly like a missing one, and changes nothing", async () => {
    const resources = await createResources(owner)
    const reader = route.readBackEnvironment === 'development' ? await server.createKey({ appId: owner.appId, environment: 'development' }) : owner
    const before = await server.request('GET', (route.readBack as (ids: Ids) => string)(resources), { key: reader })
    expect(before.status).toBe(200)
    const res = await send(route, resources, other)
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: route.otherTenant })
    const after = await server.request('GET', (route.readBack as (ids: Ids) => string)(resources), { key: reader })
    expect(after.body).toEqual(before.body)
  })
})

describe('the kit covers every authenticated operation', () => {
  it('each operation of the manifests that is not public has a case, and each case an operation', () => {
    const authenticated = [...OPERATIONS.values()].filter((operation) => operation.scope !== PUBLIC).map((operation) => operation.operationId)
    expect(ROUTES.map((route) => route.operationId).sort()).toEqual(authenticated.sort())
  })

  it('each operation of the served document that asks for credentials is in the kit', async () => {
    const res = await server.request<{ paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>> }>('GET', '/api/v0/openapi.json')
    const authenticated = Object.values(res.body.paths)
      .flatMap((methods) => Object.values(methods))
      .filter((operation) => operation.security === undefined || operation.security.length > 0)
      .map((operation) => operation.operationId)
    expect(authenticated.sort()).toEqual(ROUTES.map((route) => route.operationId).sort())
  })
})
