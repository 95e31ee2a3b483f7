/**
 * Loaded first into every test process (package.json: tap's node-arg), in place of tsx: Node 24
 * runs TypeScript itself by stripping the types (tsconfig.json's erasableSyntaxOnly and
 * verbatimModuleSyntax keep every source strippable), and this hook gives it the one thing it
 * lacks, TypeScript's NodeNext convention of importing `./x.ts` as `./x.js`. A synchronous hook in
 * the test's own thread: tsx's hooks run in a loader thread and transform every file through
 * esbuild: importing src/gateway.ts cost 1.4–1.5 s of CPU with tsx, 0.9–1.05 s with this hook and
 * Node's compile cache (the built dist/gateway.js: 0.75 s), in a suite of ~130 such files.
 */
import { enableCompileCache, registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

// Node keeps what it compiled (the stripped TypeScript too) between processes: without it every
// test process strips and compiles the gateway's sources again. A cache, nothing more: deleting
// it costs one slower run.
enableCompileCache(fileURLToPath(new URL('../../node_modules/.cache/node-compile-cache/', import.meta.url)));

registerHooks({
  resolve(specifier, context, nextResolve) {
    // Only a relative `.js` import from a TypeScript file can mean its `.ts` sibling; a real `.js`
    // (a script, a built file) resolves as before when no `.ts` is there.
    if (specifier.endsWith('.js') && specifier.startsWith('.') && context.parentURL?.endsWith('.ts') === true) {
      try {
        return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
      } catch {
        // no TypeScript sibling: the `.js` itself
      }
    }
    return nextResolve(specifier, context);
  },
});
