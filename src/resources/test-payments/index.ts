import type { Resource } from '../resource.js'
import { testPaymentsManifest } from './manifest.js'
import { testPaymentRoutes } from './routes.js'
import { PaymentResponseSchema, RefundResponseSchema } from './schemas.js'

export const testPayments: Resource = {
  manifest: testPaymentsManifest,
  routes: testPaymentRoutes,
  events: { 'test_payment.created': PaymentResponseSchema, 'test_payment.refunded': RefundResponseSchema },
}
