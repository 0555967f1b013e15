/**
 * Fine-tuning through the gateway with the official `openai` SDK against a fake OpenAI fine-tuning API
 * (https://platform.openai.com/docs/api-reference/fine-tuning: files with purpose `fine-tune`, `fine_tuning.job`
 * objects, events and checkpoints lists): the gateway's file uploaded to the channel, the job's ids the gateway's,
 * the trained tokens billed at OpenAI's training price once, another user's job a 404.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskPollerOf } from '../tasks/register.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';

const START = 10_000_000;
// openai.com/api/pricing, fine-tuning gpt-4o-mini-2024-07-18: training $3.00 / 1M tokens.
// 100,000 trained tokens × $3.00/1M = $0.30 = 150,000 quota at 500,000 quota per USD.
const TRAINED = 100_000;
const TRAINING_BILL = Math.round(((TRAINED * 3) / 1e6) * 500_000);

interface FakeJob {
  id: string;
  object: 'fine_tuning.job';
  model: string;
  status: string;
  training_file: string;
  trained_tokens: number | null;
  fine_tuned_model: string | null;
  created_at: number;
}

let t: RelayTestApp;
let baseURL: string;
const upstream = {
  files: new Map<string, string>(),
  jobs: new Map<string, FakeJob>(),
  close: async () => {},
  url: '',
};

async function readBody(request: IncomingMessage) {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function startFakeFineTuning() {
  const server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.headers.authorization !== 'Bearer sk-ft-upstream')
      return send(401, { error: { message: 'bad key' } });
    const body = await readBody(request);
    const path = request.url?.split('?')[0] ?? '';
    if (request.method === 'POST' && path === '/v1/files') {
      const form = await new Response(
        new Blob([new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.length)]),
        {
          headers: { 'content-type': String(request.headers['content-type']) },
        },
      ).formData();
      const file = form.get('file');
      if (form.get('purpose') !== 'fine-tune' || file === null || typeof file === 'string')
        return send(400, { error: { message: 'purpose fine-tune and a file are required' } });
      const id = `file-up-${upstream.files.size + 1}`;
      upstream.files.set(id, await file.text());
      return send(200, {
        id,
        object: 'file',
        purpose: 'fine-tune',
        filename: file.name,
        bytes: file.size,
        created_at: 1,
        status: 'processed',
      });
    }
    if (request.method === 'POST' && path === '/v1/fine_tuning/jobs') {
      const input = JSON.parse(body.toString()) as { model: string; training_file: string };
      if (!upstream.files.has(input.training_file)) return send(400, { error: { message: 'no such file' } });
      const job: FakeJob = {
        id: `ftjob-up-${upstream.jobs.size + 1}`,
        object: 'fine_tuning.job',
        model: input.model,
        status: 'validating_files',
        training_file: input.training_file,
        trained_tokens: null,
        fine_tuned_model: null,
        created_at: 1_700_000_000,
      };
      upstream.jobs.set(job.id, job);
      return send(200, job);
    }
    const match = /^\/v1\/fine_tuning\/jobs\/([^/]+)(\/cancel|\/events|\/checkpoints)?$/.exec(path);
    const job = match && upstream.jobs.get(match[1] ?? '');
    if (!job) return send(404, { error: { message: 'no such job' } });
    if (match?.[2] === '/cancel') {
      job.status = 'cancelled';
      return send(200, job);
    }
    if (match?.[2] === '/events')
      return send(200, {
        object: 'list',
        has_more: false,
        data: [
          {
            object: 'fine_tuning.job.event',
            id: 'ftevent-1',
            created_at: 1,
            level: 'info',
            message: 'Fine-tuning job started',
            type: 'message',
          },
        ],
      });
    if (match?.[2] === '/checkpoints')
      return send(200, {
        object: 'list',
        has_more: false,
        data: [
          {
            object: 'fine_tuning.job.checkpoint',
            id: 'ftckpt-1',
            created_at: 1,
            fine_tuned_model_checkpoint: 'ft:gpt-4o-mini:ckpt',
            fine_tuning_job_id: job.id,
            metrics: {},
            step_number: 10,
          },
        ],
      });
    return send(200, job);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  upstream.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
}

async function payer() {
  const user = await t.seedUser({ quota: START });
  const token = await t.seedToken(user.id);
  return { user, client: new OpenAI({ apiKey: `sk-${token.key}`, baseURL, maxRetries: 0 }) };
}

async function balanceOf(id: number) {
  const [row] = await t.runtime.deps.db.select({ quota: users.quota }).from(users).where(eq(users.id, id));
  return row?.quota;
}

const trainingFile = () =>
  toFile(
    Buffer.from(
      `${JSON.stringify({
        messages: [
          { role: 'user', content: 'What is 2+2?' },
          { role: 'assistant', content: '4' },
        ],
      })}\n`,
    ),
    'train.jsonl',
  );

beforeAll(async () => {
  await startFakeFineTuning();
  t = await createRelayTestApp();
  await t.seedChannel({
    type: 1,
    key: 'sk-ft-upstream',
    baseUrl: upstream.url,
    models: 'gpt-4o-mini-2024-07-18',
  });
  const relay = await t.startRelay();
  baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
}, 300_000);

afterAll(async () => {
  await t?.close();
  await upstream.close();
});

describe('fine-tuning jobs passed through to an OpenAI channel', () => {
  it('creates a job on the gateway’s file, follows it to the end and bills its trained tokens once', async () => {
    const { user, client } = await payer();
    const { client: stranger } = await payer();
    const file = await client.files.create({ file: await trainingFile(), purpose: 'fine-tune' });
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: file.id,
      hyperparameters: { n_epochs: 3 },
    });
    expect(job).toMatchObject({
      object: 'fine_tuning.job',
      training_file: file.id,
      status: 'validating_files',
    });
    expect(job.id).toMatch(/^ftjob-[0-9a-f]{24}$/);
    const [upstreamJob] = [...upstream.jobs.values()];
    expect(upstream.files.get(upstreamJob?.training_file ?? '')).toContain('What is 2+2?');
    const held = START - ((await balanceOf(user.id)) ?? 0);
    expect(held).toBeGreaterThan(0);

    const events = await client.fineTuning.jobs.listEvents(job.id);
    expect(events.data.map((event) => event.message)).toEqual(['Fine-tuning job started']);
    const checkpoints = await client.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data[0]).toMatchObject({ fine_tuning_job_id: job.id, step_number: 10 });
    await expect(stranger.fineTuning.jobs.retrieve(job.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.fineTuning.jobs.listEvents(job.id)).rejects.toMatchObject({ status: 404 });

    if (!upstreamJob) throw new Error('no upstream job');
    upstreamJob.status = 'succeeded';
    upstreamJob.trained_tokens = TRAINED;
    upstreamJob.fine_tuned_model = 'ft:gpt-4o-mini-2024-07-18:org::abc';
    // The estimate covers 3 epochs of the file; the trained tokens are billed at most that.
    const done = await client.fineTuning.jobs.retrieve(job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      trained_tokens: TRAINED,
      fine_tuned_model: 'ft:gpt-4o-mini-2024-07-18:org::abc',
    });
    await taskPollerOf(t.relay).runOnce();
    const billed = await t.runtime.deps.db
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.Consume)));
    const charged = Math.min(TRAINING_BILL, held);
    expect(billed.map((log) => log.quota)).toEqual([charged]);
    expect(await balanceOf(user.id)).toBe(START - charged);
  });

  it('bills $3.00 per million trained tokens when the hold covers them', async () => {
    const { user, client } = await payer();
    const file = await client.files.create({ file: await trainingFile(), purpose: 'fine-tune' });
    // 10 epochs held for `auto`; a large file would be needed for 100k tokens, so the job reports what it trained.
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: file.id,
    });
    const upstreamJob = [...upstream.jobs.values()].at(-1);
    if (!upstreamJob) throw new Error('no upstream job');
    const held = START - ((await balanceOf(user.id)) ?? 0);
    const trained = Math.floor((held / TRAINING_BILL) * TRAINED);
    upstreamJob.status = 'succeeded';
    upstreamJob.trained_tokens = trained;
    await client.fineTuning.jobs.retrieve(job.id);
    expect(await balanceOf(user.id)).toBe(START - Math.round(((trained * 3) / 1e6) * 500_000));
  });

  it('cancels a running job, giving the hold back when nothing was trained', async () => {
    const { user, client } = await payer();
    const file = await client.files.create({ file: await trainingFile(), purpose: 'fine-tune' });
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: file.id,
    });
    expect(await client.fineTuning.jobs.cancel(job.id)).toMatchObject({ status: 'cancelled' });
    expect(await balanceOf(user.id)).toBe(START);
    const listed = [];
    for await (const item of client.fineTuning.jobs.list()) listed.push(item.id);
    expect(listed).toEqual([job.id]);
  });
});
