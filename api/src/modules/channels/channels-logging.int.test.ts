import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.ts';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

/** A second app over the same runtime with a trace-level logger, so every line it writes can be inspected. */
describe('channel keys and the log', () => {
  let t: TestApp;
  const lines: string[] = [];
  let logged: Awaited<ReturnType<typeof buildApp>>;
  let root: ConsoleClient;

  beforeAll(async () => {
    t = await createTestApp();
    logged = await buildApp(t.runtime.deps, {
      logger: { level: 'trace', stream: { write: (line: string) => lines.push(line) } },
    });
    await logged.ready();
    root = await setupRoot(logged);
  });
  afterAll(async () => {
    await logged.close();
    await t.close();
  });

  it('never writes a channel key to the log, whatever the outcome of the call', async () => {
    const key = 'sk-log-probe-77777';
    const created = await root.post('/api/channel/', { name: 'probe', type: 1, key, models: 'gpt-4o' });
    expect(created.json().success).toBe(true);
    const id = created.json().data[0].id;
    expect((await root.put('/api/channel/', { id, key: `${key}-2` })).json().success).toBe(true);
    expect((await root.put('/api/channel/', { id, key: `${key}-3`, setting: '{bad' })).statusCode).toBe(400);
    const unreachable = await root.post('/api/channel/fetch_models', {
      type: 1,
      base_url: 'http://127.0.0.1:1',
      key: `${key}-4`,
    });
    expect(unreachable.statusCode).toBe(502);
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(line).not.toContain('sk-log-probe');
  });
});
