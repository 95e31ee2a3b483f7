/**
 * Loaded into every test process after tsx (package.json: tap's node-arg). tap's processinfo
 * hooks every spawn of a test process (a process-on-spawn listener) to load itself into the
 * child through NODE_OPTIONS, so each gateway process, CLI run and script also recorded its
 * module list and line lengths, for coverage, which this suite has off. That doubled the CPU of
 * a short CLI run (0.3 s to 0.6 s); test/cli/authgate.test.ts with test/config/check.test.ts,
 * run side by side: 96 s of CPU without the listener, 126 s with it (and its CLI file hit the
 * 300 s timeout on the loaded machine). Removing the listener leaves each child exactly as the
 * test starts it; tap's own records of the test processes are untouched.
 */
const SPAWN_HOOKS = Symbol.for('process-on-spawn@*:singletonId');
const state = (globalThis as unknown as Record<symbol, { listeners?: unknown[] } | undefined>)[SPAWN_HOOKS];
if (Array.isArray(state?.listeners)) state.listeners.length = 0;
