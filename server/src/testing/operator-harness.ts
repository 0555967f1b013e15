/**
 * The operator's test world (operator/src/testing/operator-harness.ts) with relay processes in it: the tests that
 * watch a reconciled resource reach the relay need both roles, so they live here, where the roles meet.
 */
import {
  createHarness as createOperatorHarness,
  type Harness,
} from '@turnpike/operator/testing/operator-harness';
import { buildRelayApp } from '@turnpike/relay';

export type { Harness, RelayProcess } from '@turnpike/operator/testing/operator-harness';

export function createHarness(): Promise<Harness> {
  return createOperatorHarness({ buildRelay: buildRelayApp });
}
