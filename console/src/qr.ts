// A QR code drawn as SVG elements from uqr's module matrix (no network, no image file, no markup
// parsed: the CSP allows no inline image source beyond data: and the console writes no innerHTML).
import { encode } from './uqr.js';

const SVG = 'http://www.w3.org/2000/svg';

export function qrCode(text: string, label: string): SVGSVGElement {
  // 'M' error correction: an authenticator app reads it off a screen at a glance; border 4 is
  // the quiet zone the standard asks for.
  const { data, size } = encode(text, { ecc: 'M', border: 4 });
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('width', String(size * 5));
  svg.setAttribute('height', String(size * 5));
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('class', 'qr');
  // White behind, whatever the colour scheme: scanners want dark on light.
  const background = document.createElementNS(SVG, 'rect');
  for (const [name, value] of [['width', size], ['height', size], ['fill', '#fff']] as const) background.setAttribute(name, String(value));
  const path = document.createElementNS(SVG, 'path');
  let d = '';
  data.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) d += `M${x} ${y}h1v1h-1z`;
  }));
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(background, path);
  return svg;
}
