// The vendored @simplewebauthn/browser bundle (scripts/build-console.mjs copies the library's own
// single-file build to dist/console/simplewebauthn-browser.js): loaded for its effect, it sets
// globalThis.SimpleWebAuthnBrowser. webauthn.ts reads it with the package's own types.
export {};
