import { brandingManifest } from '../../../src/resources/branding/manifest.js'
import { defineSecurityKit } from '../../auth/security-kit.js'

/** A WebP's first bytes are ASCII ("RIFF", a size, "WEBP"): the logo's type check takes it, and a text body carries it unchanged. */
const WEBP_HEAD = 'RIFF\u0024\u0000\u0000\u0000WEBPVP8 '

export const securityKit = defineSecurityKit(brandingManifest, {
  operations: {
    brandingControllerUpdate: { body: () => ({ display_name: 'Acme Widgets' }) },
    brandingControllerUploadLogo: { body: () => WEBP_HEAD, headers: () => ({ 'content-type': 'image/webp' }) },
  },
})
