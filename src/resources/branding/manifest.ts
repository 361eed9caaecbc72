import { defineManifest } from '../manifest.js'

/** The merchant a payer sees on the hosted pages: the application's display name, logo, colour and support email. */
export const brandingManifest = defineManifest({
  name: 'branding',
  scopes: ['branding:read', 'branding:write'],
  eventTypes: [],
  operations: [
    { method: 'GET', path: '/branding', operationId: 'brandingControllerGet', scope: 'branding:read' },
    { method: 'PUT', path: '/branding', operationId: 'brandingControllerUpdate', scope: 'branding:write' },
    { method: 'PUT', path: '/branding/logo', operationId: 'brandingControllerUploadLogo', scope: 'branding:write' },
    { method: 'DELETE', path: '/branding/logo', operationId: 'brandingControllerRemoveLogo', scope: 'branding:write' },
  ],
})
