// Types of the vendored uqr (scripts/build-console.mjs copies its own ESM build to dist/console/uqr.js).
export { encode } from 'uqr';
