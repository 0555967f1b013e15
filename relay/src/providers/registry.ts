/**
 * Channel type → provider, read from the catalogue's one declaration (core/src/providers/catalogue.ts `relay`).
 * A type the catalogue does not declare as relayed has no provider: its channels are never picked, and the
 * console API and the operator refuse new ones.
 */
import { type RelayProviderId, relayingOf } from '@turnpike/core/providers/catalogue';
import { aiProxyProvider } from './aiproxy/provider.ts';
import { anthropicProvider } from './anthropic/provider.ts';
import { arkProvider } from './ark/provider.ts';
import { azureProvider } from './azure/provider.ts';
import { baiduProvider } from './baidu/provider.ts';
import { bedrockProvider } from './bedrock/provider.ts';
import { cloudflareProvider } from './cloudflare/provider.ts';
import { cohereProvider } from './cohere/provider.ts';
import { dashscopeProvider } from './dashscope/provider.ts';
import { difyProvider } from './dify/provider.ts';
import { fastGptProvider } from './fastgpt/provider.ts';
import { geminiProvider } from './gemini/provider.ts';
import { hunyuanProvider } from './hunyuan/provider.ts';
import { jinaProvider } from './jina/provider.ts';
import { m3eProvider } from './m3e/provider.ts';
import { minimaxProvider } from './minimax/provider.ts';
import { openAiProvider } from './openai/provider.ts';
import type { Provider } from './provider.ts';
import { qianfanProvider } from './qianfan/provider.ts';
import { sparkProvider } from './spark/provider.ts';
import { vertexProvider } from './vertex/provider.ts';
import { zhipuProvider } from './zhipu/provider.ts';
import { zhipuLegacyProvider } from './zhipu-legacy/provider.ts';

export const providers: Record<RelayProviderId, Provider> = {
  openai: openAiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
  azure: azureProvider,
  vertex: vertexProvider,
  bedrock: bedrockProvider,
  zhipu: zhipuProvider,
  dashscope: dashscopeProvider,
  ark: arkProvider,
  qianfan: qianfanProvider,
  cloudflare: cloudflareProvider,
  minimax: minimaxProvider,
  hunyuan: hunyuanProvider,
  jina: jinaProvider,
  m3e: m3eProvider,
  'zhipu-legacy': zhipuLegacyProvider,
  fastgpt: fastGptProvider,
  dify: difyProvider,
  cohere: cohereProvider,
  baidu: baiduProvider,
  spark: sparkProvider,
  aiproxy: aiProxyProvider,
};

/**
 * The provider of a channel type, or undefined when the relay cannot talk to it; with `model` (the upstream
 * model), the one serving that model where a provider has several (Vertex's Claude publisher).
 */
export function providerFor(type: number, model?: string): Provider | undefined {
  const relay = relayingOf(type);
  if (relay?.kind !== 'relayed') return undefined;
  const provider = providers[relay.provider];
  if (provider?.format.id !== relay.format) return undefined;
  return model !== undefined && provider.forModel ? provider.forModel(model) : provider;
}

export type { Provider };
