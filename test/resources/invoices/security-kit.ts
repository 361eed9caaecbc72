import { invoicesManifest } from '../../../src/resources/invoices/manifest.js'
import { created, defineSecurityKit, type Fixtures } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Invoice not found', readBack: 'invoiceControllerFindOne' }
/** A whole CreateInvoiceDto (create and PUT take the same body), of the customer for the product. */
const invoiceBody = (fixtures: Fixtures) => ({
  name: 'i',
  email: 'i@example.com',
  customer_id: fixtures.id('customer'),
  currency: 'usdc',
  items: [{ product_id: fixtures.id('product'), quantity: 1 }],
  due_date: '2027-01-31T00:00:00.000Z',
  delivery: 'EMAIL',
  payment_link: false,
  payment_methods: ['CRYPTO'],
  status: 'OPEN',
  partial_payment: false,
})

export const securityKit = defineSecurityKit(invoicesManifest, {
  /** an OPEN invoice of the customer for the product */
  fixtures: async ({ server, key, made }) => ({ invoice: await created(server, key, '/api/v0/invoices', invoiceBody(made)) }),
  params: { id: 'invoice' },
  operations: {
    invoiceControllerCreate: { body: invoiceBody },
    invoiceControllerFindOne: { tenancy },
    invoiceControllerUpdate: { body: (fixtures) => ({ ...invoiceBody(fixtures), name: 'u' }), tenancy },
  },
})
