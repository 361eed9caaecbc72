import { encode } from 'uqr'
import { Html, html } from './html.js'

/**
 * A QR code as inline SVG, drawn here from the encoder's module matrix (uqr: no dependency of its
 * own), so a page fetches nothing from anywhere else to show it. Error correction M, a quiet zone
 * of 4 modules as the standard asks, one path of unit squares.
 */
export function qrSvg(text: string, label: string): Html {
  const { data, size } = encode(text, { ecc: 'M', border: 4 })
  let path = ''
  data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) path += `M${x} ${y}h1v1h-1z`
    })
  })
  return html`<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${size * 6}" height="${size * 6}" role="img" aria-label="${label}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`
}
