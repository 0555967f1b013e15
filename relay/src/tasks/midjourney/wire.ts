/**
 * Midjourney-Proxy's wire format (https://github.com/novicezk/midjourney-proxy, API: `/mj/submit/*`,
 * `/mj/task/{id}/fetch`, `/mj/task/list-by-condition`; the Plus variant adds `action`, `modal`, `shorten`,
 * `upload-discord-images`, `video` and `edits`). Pure: what a client sends, what the gateway sends on, what comes
 * back.
 */
import { type MjAction, mjModelOf } from '@turnpike/core/domain/midjourney-actions';
import { TaskStatus } from '@turnpike/core/domain/tasks';

/**
 * Submit answer codes: 1 accepted, 21 already exists (for INPAINT and CUSTOM_ZOOM: waiting for its modal), 22
 * queued; anything else is a refusal: 3 no account instance, 4 validation error, 23 queue full, 24 banned prompt,
 * 30 saturated (answered with HTTP 429, as the reference does, so clients back off).
 */
export const MjCode = {
  Success: 1,
  NoAccount: 3,
  Validation: 4,
  Exists: 21,
  Queued: 22,
  QueueFull: 23,
  BannedPrompt: 24,
  Saturated: 30,
} as const;

/** The submit endpoints a client may call (`POST /mj/submit/<kind>`). */
export const MJ_SUBMIT_KINDS = [
  'imagine',
  'change',
  'simple-change',
  'describe',
  'blend',
  'action',
  'modal',
  'shorten',
  'upload-discord-images',
  // Midjourney-Proxy Plus: a video from an image (or from a finished drawing, `taskId`), and image edits.
  'video',
  'edits',
] as const;
/** Face swap (Plus) is served at `POST /mj/insight-face/swap`, priced as `swap_face`. */
export const MJ_SWAP_FACE = 'insight-face/swap';
export type MjSubmitKind = (typeof MJ_SUBMIT_KINDS)[number] | typeof MJ_SWAP_FACE;

/** Mode prefixes a client may put before `/mj` (`/mj-fast/mj/submit/imagine`); passed on to the proxy. */
export const MJ_MODES = ['mj-fast', 'mj-turbo', 'mj-relax'] as const;

/** A submit answer, as the proxy sends it and as the gateway answers clients. */
export interface MjSubmitAnswer {
  code: number;
  description: string;
  result?: string | undefined;
  properties?: Record<string, unknown> | undefined;
}

/** The answer of `upload-discord-images`: the uploaded images' URLs, no task. */
export interface MjUploadAnswer {
  code: number;
  description: string;
  result: string[];
}

/** A task object as the proxy reports it (fetch, list-by-condition, the notify callback). */
export interface MjTask {
  id: string;
  action?: string;
  customId?: string;
  prompt?: string;
  promptEn?: string;
  description?: string;
  state?: string;
  submitTime?: number;
  startTime?: number;
  finishTime?: number;
  imageUrl?: string;
  status?: string;
  progress?: string;
  failReason?: string;
  buttons?: unknown[];
  properties?: Record<string, unknown>;
  /** Plus video tasks: the video, and each of a batch (`[{ url }]`). */
  videoUrl?: string;
  videoUrls?: unknown[];
}

/** What one submit asks for: the action recorded and priced, and the task it acts on (when any). */
export interface MjSubmitPlan {
  /** UPPER_SNAKE action as the proxy names it (IMAGINE, UPSCALE, ...): one of the shared set. */
  readonly action: MjAction;
  /** The priced model: `mj_<action lowercase>`. */
  readonly model: string;
  /** The task acted on (change, simple-change, action, modal, a video of a drawing). */
  readonly originId: string | undefined;
  /** INPAINT and CUSTOM_ZOOM only open a window; the modal that follows is what is billed. */
  readonly isFree: boolean;
}

const SIMPLE_CHANGE = /^\s*(\S+)\s+([UVR])(\d?)\s*$/i;

/** `MJ::JOB::upsample::1::<hash>` and friends: the action a button's customId stands for. */
export function actionOfCustomId(customId: string): MjAction | undefined {
  if (customId.startsWith('MJ::CustomZoom')) return 'CUSTOM_ZOOM';
  if (customId.startsWith('MJ::Inpaint')) return 'INPAINT';
  if (customId.startsWith('MJ::Outpaint')) return 'ZOOM';
  if (customId.startsWith('MJ::JOB::upsample')) return 'UPSCALE';
  if (customId.startsWith('MJ::JOB::variation')) return 'VARIATION';
  if (customId.startsWith('MJ::JOB::high_variation')) return 'HIGH_VARIATION';
  if (customId.startsWith('MJ::JOB::low_variation')) return 'LOW_VARIATION';
  if (customId.startsWith('MJ::JOB::reroll')) return 'REROLL';
  if (customId.startsWith('MJ::JOB::pan_')) return 'PAN';
  return undefined;
}

const CHANGE_ACTIONS: readonly string[] = ['UPSCALE', 'VARIATION', 'REROLL'] satisfies MjAction[];

/**
 * Reads what a submit asks for, or says why it cannot be served (a 400 in Midjourney's shape: code 4 is the
 * proxy's "validation error").
 */
export function planSubmit(
  kind: MjSubmitKind,
  body: Record<string, unknown>,
): { ok: true; plan: MjSubmitPlan } | { ok: false; description: string } {
  const text = (key: string) => (typeof body[key] === 'string' ? (body[key] as string) : '');
  // Only a shared MjAction is ever planned, so every stored action has a label in the drawing log.
  const plan = (action: MjAction, originId?: string): { ok: true; plan: MjSubmitPlan } => ({
    ok: true,
    plan: {
      action,
      model: mjModelOf(action),
      originId,
      isFree: action === 'INPAINT' || action === 'CUSTOM_ZOOM',
    },
  });
  switch (kind) {
    case 'imagine':
      return text('prompt') ? plan('IMAGINE') : { ok: false, description: 'prompt is required' };
    case 'describe':
      return plan('DESCRIBE');
    case 'blend':
      return plan('BLEND');
    case 'shorten':
      return text('prompt') ? plan('SHORTEN') : { ok: false, description: 'prompt is required' };
    case 'upload-discord-images':
      return plan('UPLOAD');
    case 'edits':
      return plan('EDITS');
    case 'video':
      // A video of a finished drawing names it (and goes to its channel); otherwise it starts from the body's image.
      return plan('VIDEO', text('taskId') || undefined);
    case MJ_SWAP_FACE:
      return typeof body.sourceBase64 === 'string' && typeof body.targetBase64 === 'string'
        ? plan('SWAP_FACE')
        : { ok: false, description: 'sourceBase64 and targetBase64 are required' };
    case 'change': {
      const action = text('action').toUpperCase();
      if (!CHANGE_ACTIONS.includes(action))
        return { ok: false, description: 'action must be UPSCALE, VARIATION or REROLL' };
      if (!text('taskId')) return { ok: false, description: 'taskId is required' };
      return plan(action as MjAction, text('taskId'));
    }
    case 'simple-change': {
      const match = SIMPLE_CHANGE.exec(text('content'));
      if (!match) return { ok: false, description: 'content must read "<taskId> U1" (U, V or R)' };
      const letter = (match[2] as string).toUpperCase();
      return plan(letter === 'U' ? 'UPSCALE' : letter === 'V' ? 'VARIATION' : 'REROLL', match[1]);
    }
    case 'action': {
      const action = actionOfCustomId(text('customId'));
      if (!action) return { ok: false, description: 'unknown customId' };
      if (!text('taskId')) return { ok: false, description: 'taskId is required' };
      return plan(action, text('taskId'));
    }
    case 'modal':
      if (!text('taskId')) return { ok: false, description: 'taskId is required' };
      return plan('MODAL', text('taskId'));
  }
}

const MODE_FLAGS = /\s*--(fast|relax|turbo)\b/gi;

/**
 * The body sent on: `notifyHook` only with MjNotifyEnabled, `accountFilter` only with MjAccountFilterEnabled,
 * mode flags taken out of prompts with MjModeClearEnabled (reference §7.1).
 */
export function filterSubmitBody(
  body: Record<string, unknown>,
  switches: { notify: boolean; accountFilter: boolean; modeClear: boolean },
): Record<string, unknown> {
  const sent: Record<string, unknown> = { ...body };
  if (!switches.notify) delete sent.notifyHook;
  if (!switches.accountFilter) delete sent.accountFilter;
  if (switches.modeClear && typeof sent.prompt === 'string')
    sent.prompt = sent.prompt.replace(MODE_FLAGS, '').trim();
  return sent;
}

/** Accepted by the proxy: code 1, or 21 (exists) and 22 (queued), which clients are told as 1. */
export const isAccepted = (code: number): boolean =>
  code === MjCode.Success || code === MjCode.Exists || code === MjCode.Queued;

/** Reads a submit answer; anything that is not one becomes undefined. */
export function readSubmitAnswer(value: unknown): MjSubmitAnswer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.code !== 'number') return undefined;
  return {
    code: v.code,
    description: typeof v.description === 'string' ? v.description : '',
    result:
      typeof v.result === 'string' ? v.result : typeof v.result === 'number' ? String(v.result) : undefined,
    properties:
      typeof v.properties === 'object' && v.properties !== null
        ? (v.properties as Record<string, unknown>)
        : undefined,
  };
}

/** Reads an `upload-discord-images` answer: a code and the list of URLs (anything else becomes undefined). */
export function readUploadAnswer(value: unknown): MjUploadAnswer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.code !== 'number') return undefined;
  const result = Array.isArray(v.result) ? v.result.filter((url) => typeof url === 'string') : [];
  return { code: v.code, description: typeof v.description === 'string' ? v.description : '', result };
}

/**
 * The code a client is told for an accepted submit: 21 and 22 become 1, except 21 of INPAINT and CUSTOM_ZOOM,
 * which tells the client the drawing now waits for its modal (clients call `/mj/submit/modal` on it).
 */
export function clientCodeOf(action: string, code: number): number {
  if (code === MjCode.Exists && (action === 'INPAINT' || action === 'CUSTOM_ZOOM')) return code;
  return isAccepted(code) ? MjCode.Success : code;
}

/**
 * The HTTP status of a refused submit the proxy answered: 429 for code 30 or an HTTP 429 (clients back off),
 * 200 when the proxy said 200 (the refusal is in the code, as the proxy answers), else 400: an upstream 401 or 5xx
 * is the channel's trouble, not the caller's key or the gateway.
 */
export function refusalStatusOf(httpStatus: number, code: number | undefined): number {
  if (code === MjCode.Saturated || httpStatus === 429) return 429;
  return httpStatus === 200 ? 200 : 400;
}

/**
 * What an accepted submit's row starts as. Code 21 (the task exists) may carry its state in `properties`: a
 * finished one is stored finished (SUCCESS with its image), a running one with its state. FAILURE is never taken
 * from a submit answer: the poller reads it and refunds through finish.ts.
 */
export function initialStateOf(
  code: number,
  properties: Record<string, unknown> | undefined,
): { status: string; imageUrl: string; finished: boolean } {
  const said = code === MjCode.Exists ? properties?.status : undefined;
  const status = typeof said === 'string' ? statusOf(said) : TaskStatus.Submitted;
  const imageUrl = typeof properties?.imageUrl === 'string' ? properties.imageUrl : '';
  if (status === TaskStatus.Failure || status === TaskStatus.Unknown)
    return { status: TaskStatus.Submitted, imageUrl: '', finished: false };
  return {
    status,
    imageUrl: code === MjCode.Exists ? imageUrl : '',
    finished: status === TaskStatus.Success,
  };
}

/** Reads one task object; one without an id becomes undefined. */
export function readTask(value: unknown): MjTask | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as MjTask;
  if (typeof v.id !== 'string' || v.id === '') return undefined;
  return v;
}

/** The task states the gateway keeps, from the proxy's (unknown ones are kept as UNKNOWN). */
export function statusOf(status: string | undefined): string {
  const known: readonly string[] = Object.values(TaskStatus);
  if (status === undefined || status === '') return TaskStatus.Unknown;
  return known.includes(status) ? status : TaskStatus.Unknown;
}
