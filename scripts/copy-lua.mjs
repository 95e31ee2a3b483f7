// The build's step for the Redis scripts: tsc compiles only TypeScript, and the store reads its
// Lua files (src/store/redis/scripts/**/*.lua) from next to its built module at start, so every
// .lua under src/ is copied to the same place under dist/. The .lua files already in dist/ go
// first: a script removed from src/ must not linger in a build (the store refuses unknown files).
// The vendored Envoy protos (src/edge-authz/grpc/protos/**/*.proto) travel the same way: the
// ext_authz gRPC server loads them from next to its built module.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

const copied = ['.lua', '.proto'];

/** The .lua and .proto files under `directory`, recursively, as full paths. */
function luaFiles(directory) {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && copied.some((extension) => entry.name.endsWith(extension)))
    .map((entry) => join(entry.parentPath, entry.name));
}

for (const file of luaFiles(join(root, 'dist'))) rmSync(file);
for (const file of luaFiles(join(root, 'src'))) {
  const target = join(root, 'dist', relative(join(root, 'src'), file));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
}
