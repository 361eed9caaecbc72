import { consoleManifest } from '../../../src/resources/console/manifest.js'
import { defineSecurityKit } from '../../auth/security-kit.js'

export const securityKit = defineSecurityKit(consoleManifest, {
  operations: {
    consoleControllerCreateLink: { body: () => ({ role: 'viewer', ttl: '15m' }) },
  },
})
