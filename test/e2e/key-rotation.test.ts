import t from 'tap';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { JWT_SECRET, startGateway } from '../helpers/gateway.js';

t.test('signing-key rotation without downtime', async (t) => {
  const store = createMemoryStore();
  const storage = { store, bus: createLocalInvalidationBus() };
  const NEW_SECRET = 'the-next-signing-secret-0123456789abcdef';
  const before = await startGateway(t, { deps: { storage } });
  const org = await before.createOrganization();
  const oldToken = await before.login(org.email, org.password);

  // The rolled-out replica signs with the new secret and still verifies the old one.
  const rolled = await startGateway(t, { deps: { storage }, env: { AUTHGATE_JWT_SECRET: NEW_SECRET, AUTHGATE_JWT_PREVIOUS_SECRETS: JWT_SECRET } });
  t.equal((await rolled.get('/accounts', { authorization: `Bearer ${oldToken}` })).status, 200, 'tokens of the previous secret still work');
  const newToken = await rolled.login(org.email, org.password);
  const kid = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid;
  t.not(kid(newToken), kid(oldToken), 'new tokens carry the new key id');
  t.equal((await rolled.get('/accounts', { authorization: `Bearer ${newToken}` })).status, 200);

  // Once the old tokens have expired, the previous secret is dropped.
  const finished = await startGateway(t, { deps: { storage }, env: { AUTHGATE_JWT_SECRET: NEW_SECRET } });
  t.equal((await finished.get('/accounts', { authorization: `Bearer ${oldToken}` })).status, 401, 'the retired secret no longer verifies');
  t.equal((await finished.get('/accounts', { authorization: `Bearer ${newToken}` })).status, 200);
  const other = await startGateway(t, { env: { AUTHGATE_JWT_SECRET: 'another-deployment-secret-0123456789abcd' } });
  t.equal((await other.get('/accounts', { authorization: `Bearer ${newToken}` })).status, 401, 'a token of another deployment');
});
