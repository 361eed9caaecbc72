// vitest: sqlite project only — configuration parsing, no backend.
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'

describe('PRODUCT_IMAGES_DIR', () => {
  it('is ./data/product-images by default, unset or empty, and always an absolute path', () => {
    expect(loadConfig({}).productImagesDir).toBe(resolve('data/product-images'))
    expect(loadConfig({ PRODUCT_IMAGES_DIR: '' }).productImagesDir).toBe(resolve('data/product-images'))
    expect(loadConfig({ PRODUCT_IMAGES_DIR: 'images' }).productImagesDir).toBe(resolve('images'))
    expect(loadConfig({ PRODUCT_IMAGES_DIR: '/srv/images' }).productImagesDir).toBe('/srv/images')
  })
})
