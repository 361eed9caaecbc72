import { defineManifest } from '../manifest.js'

export const testPaymentsManifest = defineManifest({
  name: 'test-payments',
  scopes: ['test_payment:create', 'test_payment:read', 'test_payment:refund'],
  eventTypes: ['test_payment.created', 'test_payment.refunded'],
  eventRows: [
    {
      types: ['test_payment.created', 'test_payment.refunded'],
      emittedBy: '`POST /test-payment` / `POST /test-payment/{id}/refund` (sandbox only)',
      data: 'the payment (`PaymentResponseDto`) / the refund (`RefundResponseDto`), as the operation answers them ([test-payments.md](test-payments.md))',
    },
  ],
  operations: [
    { method: 'POST', path: '/test-payment', operationId: 'testPaymentControllerCreatePaymentV0', scope: 'test_payment:create', idempotencyKey: 'required' },
    { method: 'GET', path: '/test-payment/:id', operationId: 'testPaymentControllerGetPaymentV0', scope: 'test_payment:read' },
    { method: 'POST', path: '/test-payment/:id/refund', operationId: 'testPaymentControllerRefundPaymentV0', scope: 'test_payment:refund', idempotencyKey: 'required' },
  ],
})
