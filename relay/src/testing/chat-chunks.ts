/**
 * What a chat client assembles from canonical chunks (`chat.completion.chunk` shapes): the text, the reasoning
 * (`reasoning_content`), each tool call's id, name and arguments joined by index, and the finish reason. Tests read
 * decoded streams through it.
 */
import type { Json } from '../formats/canonical.ts';

export function createChunkCollector() {
  let content = '';
  let reasoning = '';
  let finishReason: unknown;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  return {
    push(chunk: Json): void {
      const choice = (chunk.choices as Json[])[0] as Json;
      const delta = choice.delta as Json;
      if (typeof delta.content === 'string') content += delta.content;
      if (typeof delta.reasoning_content === 'string') reasoning += delta.reasoning_content;
      for (const call of (delta.tool_calls as Json[] | undefined) ?? []) {
        const fn = call.function as Json;
        const held = calls.get(call.index as number) ?? { id: '', name: '', arguments: '' };
        if (typeof call.id === 'string') held.id = call.id;
        if (typeof fn.name === 'string' && fn.name !== '') held.name = fn.name;
        if (typeof fn.arguments === 'string') held.arguments += fn.arguments;
        calls.set(call.index as number, held);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    },
    seen: () => ({ content, reasoning, toolCalls: [...calls.values()], finishReason }),
  };
}
