/**
 * The client's protocol, decided once per call: which ingress (formats/) a client of a path reads its answers and
 * errors in.
 */
import type { ClientProtocol } from '@turnpike/core/http/edge-errors';
import type { Ingress } from '../contract.ts';
import { anthropicMessagesIngress } from '../formats/anthropic/ingress.ts';
import { geminiIngress } from '../formats/gemini/ingress.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';

/**
 * The ingress whose shapes a client of `protocol` reads its errors in (core's `clientProtocolOf` says which
 * protocol a path belongs to); the relay's own errors outside the three model protocols are OpenAI's.
 */
export function ingressOfProtocol(protocol: ClientProtocol): Ingress {
  if (protocol === 'anthropic') return anthropicMessagesIngress;
  if (protocol === 'gemini') return geminiIngress;
  return openAiChatIngress;
}
