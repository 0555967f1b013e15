/** Playground rules (spec 03 sections 3, 4, 5 and 9): the conversation, its message states and the request. */

export type ChatRole = 'user' | 'assistant' | 'system';

/**
 * A reply is `loading` until its first chunk, `incomplete` while chunks arrive, then `complete` (end marker, or
 * a stream that closed without one) or `error`. A finished message is never changed again.
 */
export type MessageStatus = 'loading' | 'incomplete' | 'complete' | 'error';

export interface ChatMessage {
  id: number;
  role: ChatRole;
  content: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  status: MessageStatus;
  /** The user stopped the reply before it ended. */
  stopped?: boolean;
}

/** The greeting exchange takes ids 2 and 3 (1 is the system prompt's); the first message sent gets 4. */
export const FIRST_MESSAGE_ID = 4;

export interface ChatState {
  messages: ChatMessage[];
  nextId: number;
}

export type ChatAction =
  | { type: 'send'; text: string; now: number }
  | { type: 'delta'; id: number; text: string }
  | { type: 'finish'; id: number; stopped?: boolean }
  | { type: 'fail'; id: number; message: string }
  | { type: 'clear' };

/** The conversation a visit starts with: a greeting from the user and the assistant's answer. */
export function greetingState(userText: string, assistantText: string, now: number): ChatState {
  return {
    messages: [
      { id: 2, role: 'user', content: userText, createdAt: now, status: 'complete' },
      { id: 3, role: 'assistant', content: assistantText, createdAt: now, status: 'complete' },
    ],
    nextId: FIRST_MESSAGE_ID,
  };
}

export const isFinished = (message: ChatMessage) =>
  message.status === 'complete' || message.status === 'error';

/** The id the reply to the next `send` will have. */
export const nextReplyId = (state: ChatState) => state.nextId + 1;

function update(state: ChatState, id: number, change: (m: ChatMessage) => ChatMessage): ChatState {
  let changed = false;
  const messages = state.messages.map((m) => {
    if (m.id !== id || isFinished(m)) return m;
    changed = true;
    return change(m);
  });
  return changed ? { ...state, messages } : state;
}

export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'send': {
      const userId = state.nextId;
      return {
        messages: [
          ...state.messages,
          { id: userId, role: 'user', content: action.text, createdAt: action.now, status: 'complete' },
          { id: userId + 1, role: 'assistant', content: '', createdAt: action.now, status: 'loading' },
        ],
        nextId: userId + 2,
      };
    }
    case 'delta':
      return update(state, action.id, (m) => ({
        ...m,
        content: m.content + action.text,
        status: 'incomplete',
      }));
    case 'finish':
      return update(state, action.id, (m) => ({
        ...m,
        status: 'complete',
        ...(action.stopped ? { stopped: true } : {}),
      }));
    case 'fail':
      // the error text is appended to what already arrived (spec 03 section 8)
      return update(state, action.id, (m) => ({
        ...m,
        content: m.content ? `${m.content}\n${action.message}` : action.message,
        status: 'error',
      }));
    case 'clear':
      return { ...state, messages: [] };
  }
}

/** What the settings panel holds, as typed. */
export interface PlaygroundSettings {
  group: string;
  model: string;
  temperature: number;
  /** The max tokens field text; blank or 0 means no limit. */
  maxTokens: string;
  systemPrompt: string;
}

export const TEMPERATURE = { min: 0.1, max: 1, step: 0.1 } as const;
export const DEFAULT_MODEL = 'gpt-4o-mini';

/**
 * Defaults of spec 03 section 3. The spec's temperature 0 lies below the slider's minimum (0.1), so the slider
 * would show a value it does not send; the playground starts at the minimum instead.
 */
export function defaultSettings(systemPrompt: string): PlaygroundSettings {
  return { group: '', model: DEFAULT_MODEL, temperature: TEMPERATURE.min, maxTokens: '0', systemPrompt };
}

/** The slider's value rounded to its step, kept within its range (floating point makes 0.1 + 0.2 ≠ 0.3). */
export function clampTemperature(value: number): number {
  if (!Number.isFinite(value)) return TEMPERATURE.min;
  const stepped = Math.round(value / TEMPERATURE.step) * TEMPERATURE.step;
  return Number(Math.min(TEMPERATURE.max, Math.max(TEMPERATURE.min, stepped)).toFixed(1));
}

export type SettingsProblem = 'error.modelRequired' | 'error.maxTokens';

/** The max tokens as the integer to send, or null when the text is not a whole number ≥ 0. */
export function parseMaxTokens(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return 0;
  if (!/^\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : null;
}

/** Problems per field; an empty object means the settings can be sent. */
export function checkSettings(
  settings: PlaygroundSettings,
): Partial<Record<'model' | 'maxTokens', SettingsProblem>> {
  const problems: Partial<Record<'model' | 'maxTokens', SettingsProblem>> = {};
  if (!settings.model.trim()) problems.model = 'error.modelRequired';
  if (parseMaxTokens(settings.maxTokens) === null) problems.maxTokens = 'error.maxTokens';
  return problems;
}

/** The body of POST /pg/chat/completions (spec 03 section 3, "Chat request"). */
export interface ChatRequest {
  model: string;
  group: string;
  messages: Array<{ role: ChatRole; content: string }>;
  stream: true;
  temperature: number;
  max_tokens?: number;
}

/**
 * The request for the conversation so far: the system prompt first (when there is one), then every user
 * message and every finished, non-failed assistant reply. Max tokens 0 means "no limit" and is left out, since
 * upstream providers reject a limit of 0.
 */
export function buildChatRequest(
  settings: PlaygroundSettings,
  messages: readonly ChatMessage[],
): ChatRequest {
  const history = messages
    .filter((m) => m.role === 'user' || (m.status === 'complete' && m.content !== ''))
    .map((m) => ({ role: m.role, content: m.content }));
  const system = settings.systemPrompt.trim();
  const maxTokens = parseMaxTokens(settings.maxTokens) ?? 0;
  return {
    model: settings.model.trim(),
    group: settings.group,
    messages: system ? [{ role: 'system', content: settings.systemPrompt }, ...history] : history,
    stream: true,
    temperature: clampTemperature(settings.temperature),
    ...(maxTokens > 0 ? { max_tokens: maxTokens } : {}),
  };
}
