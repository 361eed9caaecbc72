/*
 * What other modules may use of branding (the only file of this folder they import): the
 * merchant a hosted page shows, and the changes the CLI makes.
 */
export { type Brand, findBrand } from './brand.js'
export { changeBranding, checkedBrandingChanges, type BrandingInput, storeLogo } from './changes.js'
