/**
 * The reader of a stream of any other format, or of any format with a client of another: the format's decoder
 * reads each event into canonical chat chunks, which the client's encoder writes; when the client speaks the
 * upstream's own format the chunks only meter the stream, and each event goes on as it came.
 */
import type { StreamDecoder } from '../formats/format.ts';
import { formatSseEvent, type SseEvent } from '../sse.ts';
import type { Json } from './respond.ts';
import type { StreamReader, StreamState } from './stream-state.ts';

export function createDecodedReader(
  state: StreamState,
  decoder: StreamDecoder,
  /** The client speaks the upstream's format: events are passed on as they came, only metered. */
  passUnread: boolean,
): StreamReader {
  return new DecodedReader(state, decoder, passUnread);
}

/** One stream's reader, an object rather than closures (a process holds thousands at once). */
class DecodedReader implements StreamReader {
  readonly writesEnd: boolean;
  private readonly state: StreamState;
  private readonly decoder: StreamDecoder;
  private readonly passUnread: boolean;

  constructor(state: StreamState, decoder: StreamDecoder, passUnread: boolean) {
    this.state = state;
    this.decoder = decoder;
    this.passUnread = passUnread;
    this.writesEnd = !passUnread;
  }

  read(event: SseEvent): boolean {
    const { state, passUnread } = this;
    const { writer, encoder } = state;
    state.arrived();
    const decoded = this.decoder.push(event);
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
      const data = state.redactor.redact(event.data);
      writer.write(
        encoder.passEvent ? encoder.passEvent(data) : formatSseEvent(data, { event: event.event }),
      );
    }
    return true;
  }

  heldFrame(index: number, text: string): string {
    const { last, encoder } = this.state;
    const chunk: Json = {
      id: last.id,
      object: 'chat.completion.chunk',
      created: last.created,
      model: last.model,
      choices: [{ index, delta: { content: text }, finish_reason: null }],
    };
    return encoder.chunk(chunk);
  }

  ended(): void {
    this.state.upstreamUsage = this.decoder.usage();
  }
}
