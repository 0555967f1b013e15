/**
 * The bytes of the files users upload (`/v1/files`) and of their batches' output, behind one seam: an S3-compatible
 * object store when one is configured (`S3_BUCKET`; https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html,
 * the same calls for MinIO and any S3 API), else the database (`file_contents`), which is what the embedded default
 * and a single Postgres keep everything in, so every relay sees every file.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { eq } from 'drizzle-orm';
import type { ObjectStoreConfig } from '../config.ts';
import type { Db } from '../db/client.ts';
import { fileContents } from '../db/schema/index.ts';

export interface FileStore {
  /** `database` or `s3`, as the `files.storage` column records it. */
  readonly kind: FileStorage;
  put(fileId: string, content: Buffer): Promise<void>;
  /** The bytes, or undefined when nothing is stored under the id. */
  get(fileId: string): Promise<Buffer | undefined>;
  delete(fileId: string): Promise<void>;
}

export type FileStorage = 'database' | 's3';

export function createDatabaseFileStore(db: Db): FileStore {
  return {
    kind: 'database',
    async put(fileId, content) {
      await db.insert(fileContents).values({ fileId, content });
    },
    async get(fileId) {
      const [row] = await db.select().from(fileContents).where(eq(fileContents.fileId, fileId));
      return row?.content;
    },
    async delete(fileId) {
      await db.delete(fileContents).where(eq(fileContents.fileId, fileId));
    },
  };
}

/** The object key of a file: `files/<id>`. */
export const objectKeyOf = (fileId: string): string => `files/${fileId}`;

export function createS3FileStore(config: ObjectStoreConfig): FileStore {
  const client = new S3Client({
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.accessKeyId && config.secretAccessKey
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
      : {}),
  });
  const Bucket = config.bucket;
  return {
    kind: 's3',
    async put(fileId, content) {
      await client.send(new PutObjectCommand({ Bucket, Key: objectKeyOf(fileId), Body: content }));
    },
    async get(fileId) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: objectKeyOf(fileId) }));
        if (!answer.Body) return undefined;
        return Buffer.from(await answer.Body.transformToByteArray());
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
        throw err;
      }
    },
    async delete(fileId) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: objectKeyOf(fileId) }));
    },
  };
}

/** The store the deployment configured: the object store when `S3_BUCKET` is set, else the database. */
export function openFileStore(
  config: { readonly objectStore?: ObjectStoreConfig | undefined },
  db: Db,
): FileStore {
  return config.objectStore ? createS3FileStore(config.objectStore) : createDatabaseFileStore(db);
}
