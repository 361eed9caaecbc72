import { productsManifest } from '../../../src/resources/products/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Product not found', readBack: 'productControllerFindOne' }
const productBody = () => ({ name: 'p', price: '1.00' })

export const securityKit = defineSecurityKit(productsManifest, {
  fixtures: async ({ server, key }) => ({ product: await created(server, key, '/api/v0/products', productBody()) }),
  params: { id: 'product' },
  operations: {
    productControllerCreate: { body: productBody },
    productControllerFindOne: { tenancy },
    productControllerUpdate: { body: () => ({ name: 'u' }), tenancy },
    productControllerRemove: { tenancy },
    productControllerUploadImage: { body: () => ({ images: ['https://example.com/p.png'] }), tenancy },
  },
})
