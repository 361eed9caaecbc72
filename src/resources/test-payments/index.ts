import { defineResource } from '../resource.js'
import { testPaymentsManifest } from './manifest.js'
import { testPaymentsMigrations } from './migrations.js'
import { testPaymentRoutes } from './routes.js'
import { PaymentResponseSchema, RefundResponseSchema } from './schemas.js'
import { testPaymentsTables } from './tables.js'

export const testPayments = defineResource({
  manifest: testPaymentsManifest,
  tables: testPaymentsTables,
  migrations: testPaymentsMigrations,
  routes: testPaymentRoutes,
  events: { 'test_payment.created': PaymentResponseSchema, 'test_payment.refunded': RefundResponseSchema },
})
