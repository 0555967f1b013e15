/**
 * AWS's published SigV4 test suite (aws-sig-v4-test-suite, from
 * https://docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html; the files quoted here are its copy at
 * https://github.com/mhart/aws4/tree/master/test/aws-sig-v4-test-suite): each case's request (`.req`), canonical
 * request (`.creq`), string to sign (`.sts`) and `Authorization` header (`.authz`), written out as literals. The
 * relay's signing path must produce the suite's header; the fake Bedrock's own SigV4 (testing/sigv4.ts, which checks
 * the relay's requests in the integration tests) must produce every step of it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  authorizationOf,
  canonicalRequestOf,
  type SigV4Request,
  stringToSignOf,
} from '../../testing/sigv4.ts';
import { signRequest } from './credentials.ts';

/** The suite's credentials, region, service and time (its README). */
const SUITE = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  service: 'service',
} as const;
const AMZ_DATE = '20150830T123600Z';
const EMPTY_HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const SCOPE = '20150830/us-east-1/service/aws4_request';

interface SuiteCase {
  readonly name: string;
  /** `.req`: method, path and query as sent, the headers besides Host and X-Amz-Date, the body. */
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly creq: string;
  readonly sts: string;
  readonly authz: string;
  /** The relay signs URLs: a path it sends is already escaped, so a raw UTF-8 path is not one it can be given. */
  readonly relayCanSend: boolean;
}

const CASES: readonly SuiteCase[] = [
  {
    name: 'get-vanilla',
    method: 'GET',
    path: '/',
    query: '',
    headers: {},
    body: '',
    creq: `GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${EMPTY_HASH}`,
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`,
    relayCanSend: true,
  },
  {
    name: 'get-vanilla-query-order-key-case',
    method: 'GET',
    path: '/',
    query: 'Param2=value2&Param1=value1',
    headers: {},
    body: '',
    creq: `GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${EMPTY_HASH}`,
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\n816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500`,
    relayCanSend: true,
  },
  {
    name: 'post-vanilla',
    method: 'POST',
    path: '/',
    query: '',
    headers: {},
    body: '',
    creq: `POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${EMPTY_HASH}`,
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\n553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`,
    relayCanSend: true,
  },
  {
    name: 'post-vanilla-query',
    method: 'POST',
    path: '/',
    query: 'Param1=value1',
    headers: {},
    body: '',
    creq: `POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${EMPTY_HASH}`,
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\n9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11`,
    relayCanSend: true,
  },
  {
    name: 'post-x-www-form-urlencoded',
    method: 'POST',
    path: '/',
    query: '',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'Param1=value1',
    creq: 'POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e',
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\n42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a`,
    relayCanSend: true,
  },
  {
    name: 'get-header-value-trim',
    method: 'GET',
    path: '/',
    query: '',
    headers: { 'My-Header1': ' value1', 'My-Header2': ' "a   b   c"' },
    body: '',
    creq: `GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:"a b c"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n${EMPTY_HASH}`,
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\na726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=host;my-header1;my-header2;x-amz-date, Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736`,
    relayCanSend: true,
  },
  {
    name: 'get-utf8',
    method: 'GET',
    path: '/\u1234',
    query: '',
    headers: {},
    body: '',
    creq: `GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n${EMPTY_HASH}`,
    sts: `AWS4-HMAC-SHA256\n20150830T123600Z\n${SCOPE}\n2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102`,
    authz: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${SCOPE}, SignedHeaders=host;x-amz-date, Signature=8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85`,
    relayCanSend: false,
  },
];

const asArrived = (c: SuiteCase): SigV4Request => ({
  method: c.method,
  path: c.path,
  query: c.query,
  headers: { ...c.headers, Host: 'example.amazonaws.com', 'X-Amz-Date': AMZ_DATE },
  body: c.body,
});

describe("AWS's SigV4 test suite", () => {
  it.each(CASES.filter((c) => c.relayCanSend))(
    "the relay's signer gives the suite's Authorization header: $name",
    async (c) => {
      const signed = await signRequest(
        {
          kind: 'sigv4',
          accessKeyId: SUITE.accessKeyId,
          secretAccessKey: SUITE.secretAccessKey,
          region: SUITE.region,
        },
        {
          method: c.method,
          url: `https://example.amazonaws.com${c.path}${c.query ? `?${c.query}` : ''}`,
          headers: c.headers,
          body: c.body,
        },
        { service: SUITE.service, hashHeader: false },
        new Date('2015-08-30T12:36:00Z'),
      );
      expect(signed.authorization).toBe(c.authz);
      expect(signed['x-amz-date']).toBe(AMZ_DATE);
      expect(signed.host).toBe('example.amazonaws.com');
    },
  );

  it.each(CASES)(
    "the fake Bedrock's verifier gives the suite's canonical request, string to sign and header: $name",
    (c) => {
      const canonical = canonicalRequestOf(asArrived(c));
      expect(canonical).toBe(c.creq);
      expect(stringToSignOf(AMZ_DATE, SUITE.region, SUITE.service, canonical)).toBe(c.sts);
      expect(authorizationOf(SUITE, AMZ_DATE, asArrived(c))).toBe(c.authz);
    },
  );

  it('a Bedrock request is signed with its body hash as a header, and the verifier agrees on the escaped model id', async () => {
    // The suite has no case with an escaped path: a model id's `:` goes as `%3A` and is escaped again in the
    // canonical request (AWS's rule for every service but S3), which both sides must do alike.
    const credential = {
      kind: 'sigv4',
      accessKeyId: SUITE.accessKeyId,
      secretAccessKey: SUITE.secretAccessKey,
      region: SUITE.region,
    } as const;
    const url =
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke';
    const body = '{"anthropic_version":"bedrock-2023-05-31","max_tokens":8,"messages":[]}';
    const signed = await signRequest(
      credential,
      { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
      undefined,
      new Date('2015-08-30T12:36:00Z'),
    );
    expect(signed['x-amz-content-sha256']).toBe(createHash('sha256').update(body).digest('hex'));
    const names = /SignedHeaders=([^,]+)/.exec(signed.authorization ?? '')?.[1]?.split(';') ?? [];
    expect(names).toEqual(['content-type', 'host', 'x-amz-content-sha256', 'x-amz-date']);
    const arrived: SigV4Request = {
      method: 'POST',
      path: new URL(url).pathname,
      query: '',
      headers: Object.fromEntries(names.map((name) => [name, signed[name] ?? ''])),
      body,
    };
    expect(canonicalRequestOf(arrived).split('\n')[1]).toBe(
      '/model/anthropic.claude-3-haiku-20240307-v1%253A0/invoke',
    );
    expect(authorizationOf({ ...SUITE, service: 'bedrock' }, AMZ_DATE, arrived)).toBe(signed.authorization);
  });
});
