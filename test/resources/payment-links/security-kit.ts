import { paymentLinksManifest } from '../../../src/resources/payment-links/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Payment link not found', readBack: 'paymentLinksControllerFindOne' }
/** A DONATION link's whole create body, its url a slug no other call uses. */
const paymentLinkBody = () => ({ url: `kit-${crypto.randomUUID()}`, title: 't', linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc' })

export const securityKit = defineSecurityKit(paymentLinksManifest, {
  fixtures: async ({ server, key }) => ({ paymentLink: await created(server, key, '/api/v0/payment-links', paymentLinkBody()) }),
  params: { id: 'paymentLink' },
  operations: {
    paymentLinksControllerCreate: { body: paymentLinkBody },
    paymentLinksControllerFindAll: { query: { skip: '0', take: '10' } },
    paymentLinksControllerFindOne: { tenancy },
    paymentLinksControllerUpdate: { body: () => ({ title: 'u' }), tenancy },
  },
})
