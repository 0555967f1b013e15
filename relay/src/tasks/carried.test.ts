import { carriedBy, PROVIDER_TYPES, relayingOf, TASK_CARRIED } from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
import { TASK_PROVIDERS } from './register.ts';

// The catalogue declares what each type carries once; the console's type list and its coverage warning read that
// declaration, so the task providers must serve exactly the types it says carry their tasks.
describe("the catalogue's task kinds against the relay's task providers", () => {
  it('says a type carries a kind of task exactly when that kind’s provider serves the type', () => {
    expect(TASK_PROVIDERS.map((p) => p.carries).sort()).toEqual([...TASK_CARRIED].sort());
    for (const { value } of PROVIDER_TYPES)
      for (const provider of TASK_PROVIDERS)
        expect(carriedBy(value).includes(provider.carries), `type ${value} ${provider.carries}`).toBe(
          provider.channelTypes.includes(value),
        );
  });

  it('declares the types that only serve tasks as carrying nothing else', () => {
    const taskKinds: ReadonlySet<string> = new Set(TASK_CARRIED);
    for (const { value } of PROVIDER_TYPES)
      if (relayingOf(value)?.kind === 'tasks') {
        expect(carriedBy(value).length, `type ${value}`).toBeGreaterThan(0);
        expect(
          carriedBy(value).every((kind) => taskKinds.has(kind)),
          `type ${value}`,
        ).toBe(true);
      }
  });
});
