/**
 * The live route table: one reference both request paths read per request (`current()`), swapped
 * whole by a reload (route-table/reload.ts). A request reads it once, when it is matched, and keeps
 * what it matched: a swap meanwhile changes nothing for it. Listeners (the upstream pools, the
 * metrics) hear of each swap after it.
 */
import type { RouteTable, RouteTableSource } from './types.js';

export type LiveRouteTable = RouteTableSource &
  Readonly<{
    swap(table: RouteTable): void;
    onSwap(listener: (table: RouteTable, previous: RouteTable) => void): void;
  }>;

export function createLiveRouteTable(initial: RouteTable): LiveRouteTable {
  let table = initial;
  const listeners: ((table: RouteTable, previous: RouteTable) => void)[] = [];
  return {
    current: () => table,
    swap(next) {
      const previous = table;
      table = next;
      for (const listener of listeners) listener(next, previous);
    },
    onSwap(listener) {
      listeners.push(listener);
    },
  };
}
