/**
 * The reader of a stream of any other format, or of any format with a client of another: the format's decoder
 * reads each event into canonical chat chunks, which the client's encoder writes; when the client speaks the
 * upstream's own format the chunks only meter the stream, and each event goes on as it came.
 */
import type { StreamDecoder } from '../formats/format.ts';
import { formatSseEvent } from '../sse.ts';
import type { Json } from './respond.ts';
import type { StreamReader, StreamState } from './stream-state.ts';

export function createDecodedReader(
  state: StreamState,
  decoder: StreamDecoder,
  /** The client speaks the upstream's format: events are passed on as they came, only metered. */
  passUnread: boolean,
): StreamReader {
  const { writer, encoder, redactor } = state;
  return {
    writesEnd: !passUnread,
    read(event) {
      state.arrived();
      const decoded = decoder.push(event);
      if (decoded.error) {
        state.upstreamError = decoded.error;
        return false;
      }
      if (decoded.finished) state.finished = true;
      for (const chunk of decoded.chunks) {
        if (state.readChoices(chunk) === false) return false;
        if (!passUnread) writer.write(encoder.chunk(chunk));
      }
      if (passUnread) {
        const data = redactor.redact(event.data);
        writer.write(
          encoder.passEvent ? encoder.passEvent(data) : formatSseEvent(data, { event: event.event }),
        );
      }
      return true;
    },
    heldFrame(index, text) {
      const { last } = state;
      const chunk: Json = {
        id: last.id,
        object: 'chat.completion.chunk',
        created: last.created,
        model: last.model,
        choices: [{ index, delta: { content: text }, finish_reason: null }],
      };
      return encoder.chunk(chunk);
    },
    ended() {
      state.upstreamUsage = decoder.usage();
    },
  };
}
