/**
 * A real S3-compatible server for tests (s3rver, https://github.com/jamhall/s3rver), started by the test itself on a
 * free port with one bucket, its data in a temporary directory. It accepts the access key `S3RVER` with the secret
 * `S3RVER` and checks request signatures, so the product's `@aws-sdk/client-s3` calls are exercised as sent.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface S3rverInstance {
  run(): Promise<{ port: number; address: string }>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;

export interface TestS3Server {
  /** The S3_* settings of a deployment that keeps its files there. */
  readonly env: Record<string, string>;
  readonly endpoint: string;
  readonly bucket: string;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'turnpike-files'): Promise<TestS3Server> {
  const directory = await mkdtemp(path.join(tmpdir(), 'turnpike-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
