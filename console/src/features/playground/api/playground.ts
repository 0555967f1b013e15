import i18next from 'i18next';
import { getSessionUser } from '../../../lib/session.ts';
import { fetchUserGroups, fetchUserModels } from '../../tokens/api/tokens.ts';
import type { ChatRequest } from '../messages.ts';
import { errorMessageOf, readChatChunk, readSse } from '../sse.ts';

export const userGroupsQuery = { queryKey: ['user', 'groups'], queryFn: fetchUserGroups } as const;
export const userModelsQuery = { queryKey: ['user', 'models'], queryFn: fetchUserModels } as const;

/** How a streamed reply ended. */
export type StreamOutcome = { kind: 'complete' } | { kind: 'stopped' } | { kind: 'error'; message: string };

const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

/** The text of a failed answer: the OpenAI-style error message, else the body, else the HTTP status. */
async function failureText(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const message = errorMessageOf(JSON.parse(text));
    if (message) return message;
  } catch {
    // not JSON: fall through
  }
  const plain = text.trim();
  return plain && plain.length <= 300 && !plain.startsWith('<')
    ? plain
    : i18next.t('error.requestFailed', { message: `HTTP ${response.status}` });
}

/**
 * Sends the conversation to POST /pg/chat/completions with the session cookie and reads the streamed reply,
 * calling `onDelta` with each piece of text as it arrives. Never throws: a failure is an `error` outcome whose
 * message is the one the server gave; aborting `signal` is a `stopped` outcome.
 */
export async function streamChat(
  body: ChatRequest,
  onDelta: (text: string) => void,
  signal: AbortSignal,
): Promise<StreamOutcome> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'text/event-stream',
  };
  const user = getSessionUser();
  if (user) headers['New-Api-User'] = String(user.id);
  try {
    const response = await fetch('/pg/chat/completions', {
      method: 'POST',
      headers,
      credentials: 'same-origin',
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) return { kind: 'error', message: await failureText(response) };
    if (!response.body) return { kind: 'complete' };
    if ((response.headers.get('content-type') ?? '').includes('application/json')) {
      // an answer that was not streamed after all: one body with the whole message
      const chunk = readChatChunk(await response.text());
      if (chunk.kind === 'error') return { kind: 'error', message: chunk.message };
      if (chunk.kind === 'delta') onDelta(chunk.text);
      return { kind: 'complete' };
    }
    for await (const event of readSse(response.body, signal)) {
      if (signal.aborted) break;
      if (event.event === 'error') {
        const parsed = readChatChunk(event.data);
        return { kind: 'error', message: parsed.kind === 'error' ? parsed.message : event.data };
      }
      const chunk = readChatChunk(event.data);
      if (chunk.kind === 'done') return { kind: 'complete' };
      if (chunk.kind === 'error') return { kind: 'error', message: chunk.message };
      if (chunk.kind === 'delta') onDelta(chunk.text);
    }
    if (signal.aborted) return { kind: 'stopped' };
    // the stream closed without an end marker: what arrived is the reply
    return { kind: 'complete' };
  } catch (error) {
    if (signal.aborted || isAbort(error)) return { kind: 'stopped' };
    const reason = error instanceof Error ? error.message : String(error);
    return { kind: 'error', message: i18next.t('error.requestFailed', { message: reason }) };
  }
}
