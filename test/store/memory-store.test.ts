import t from 'tap';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { storeContract } from './store-contract.js';

storeContract(t, async () => {
  const store = createMemoryStore();
  return { store, close: () => store.close() };
});
