/**
 * The authorization port's header-for-header and byte-for-byte tests again, with every speed
 * trick off (edge-authz/speed-tricks.ts): what they assert is the port's behaviour, which must be
 * the same either way. test/helpers/gateway.ts's testConfig passes the variable on to every
 * gateway these files start. Left out, as they assert a trick itself: decider.test.ts's kept allow
 * and fast-front.test.ts (which requests the front takes). grpc-gateway.test.ts passes this way
 * too (`AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=all npx tap test/edge-authz/grpc-gateway.test.ts`) but is
 * left to that, for its time. speed-tricks.test.ts compares the answers of both ways directly.
 */
process.env['AUTHGATE_AUTHZ_SPEED_TRICKS_OFF'] = 'all';
await import('./kept-allow.test.js');
await import('./http-endpoints.test.js');
