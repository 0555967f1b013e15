/** Where a realtime session is opened upstream, and with which headers (the credential among them). */
export interface RealtimeUpstream {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** An http(s) URL as the ws(s) URL of the same place. */
export const webSocketUrlOf = (url: string): string => url.replace(/^http(s?):\/\//i, 'ws$1://');
