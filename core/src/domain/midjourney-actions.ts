/**
 * The actions a Midjourney drawing task is stored under (`midjourneys.action`), as Midjourney-Proxy names them.
 * The relay records only these (relay/src/tasks/midjourney/wire.ts plans every submit as one of them), the
 * drawing log labels each of them, and each is priced as its model (`mjModelOf`).
 */
export const MjAction = {
  Imagine: 'IMAGINE',
  Upscale: 'UPSCALE',
  Variation: 'VARIATION',
  HighVariation: 'HIGH_VARIATION',
  LowVariation: 'LOW_VARIATION',
  Pan: 'PAN',
  Reroll: 'REROLL',
  Zoom: 'ZOOM',
  /** Opens a window only (free); the MODAL that follows is billed. */
  CustomZoom: 'CUSTOM_ZOOM',
  /** Opens a window only (free); the MODAL that follows is billed. */
  Inpaint: 'INPAINT',
  Modal: 'MODAL',
  Describe: 'DESCRIBE',
  Blend: 'BLEND',
  Shorten: 'SHORTEN',
  SwapFace: 'SWAP_FACE',
  /** `upload-discord-images`: no task, a finished row with the URLs. */
  Upload: 'UPLOAD',
  /** Midjourney-Proxy Plus: a video from an image or a finished drawing. */
  Video: 'VIDEO',
  /** Midjourney-Proxy Plus: image edits. */
  Edits: 'EDITS',
} as const;
export type MjAction = (typeof MjAction)[keyof typeof MjAction];

/** The priced model of an action: `mj_<action lowercase>`, except face swap, which is `swap_face`. */
export const mjModelOf = (action: MjAction): string =>
  action === MjAction.SwapFace ? 'swap_face' : `mj_${action.toLowerCase()}`;
