/** The fake OpenAI upstream (relay/src/testing/fake-openai-main.ts) of a checkout, in a process of its own. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** Starts it on a free port with `args` (its delays) and resolves with the process and the URL it printed. */
export async function startFakeUpstream(
  checkout: string,
  args: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [path.join(checkout, 'relay/src/testing/fake-openai-main.ts'), '--port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (data: Buffer) => {
      seen += data.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the fake upstream exited (${code})`)));
  });
  return { child, url };
}
