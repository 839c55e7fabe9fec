import { describe, expect, it } from 'vitest';
import { ContentType, Header, replyForOf } from '#ctrl-channel/message.ts';
import { encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { certificatesOf, fingerprintOf } from '#shared/pki/certificates.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledRouter,
  enrollRouter,
  fingerprintOfCredentials,
  type RouterEnd,
} from '../support/ctrl-router.ts';

/**
 * VerifyRouter (1036, issue 37): a router accepting a link asks whether the router dialing it is the one it claims,
 * with the fingerprints of the certificates the dialer presented, and refuses the link unless a successful result
 * answers. The dialer is verified by its enrolled certificate; a disabled router, an unknown id, and a re-enrolled
 * router's old certificate are refused.
 */
const { controller, call } = useAdminController();

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

/** The router, connected and past its hello. */
async function connected(credentials: Credentials, routerId: string): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), credentials, { answerHeartbeats: true });
  const answer = await end.hello(routerId);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

let sequence = 50_000;
/** Asks the controller, as a listening router, to verify `routerId` by `fingerprints`: success and the answer's text. */
async function verify(end: RouterEnd, routerId: string, fingerprints: readonly string[]) {
  const asked = sequence++;
  end.send({
    contentType: ContentType.verifyRouter,
    sequence: asked,
    body: encodeBody('ctrl.VerifyRouter', { routerId, fingerprints }),
  });
  for (;;) {
    const message = await end.next(5_000);
    if (replyForOf(message) !== asked) continue;
    expect(message.contentType).toBe(ContentType.result);
    return { success: message.headers.get(Header.resultSuccess)?.[0] === 1, text: message.body.toString() };
  }
}

/**
 * The fingerprints a router presents on a link: those of the chain it sends (its certificate's, the CA's that may come
 * with it; here one that stands for a CA's first).
 */
const chainFingerprints = (credentials: Credentials) => [
  'ab'.repeat(20),
  ...certificatesOf(credentials.cert).map((certificate) => fingerprintOf(certificate)),
];

describe('VerifyRouter', () => {
  it('verifies an edge or a transit router by the certificate it enrolled, among the chain it presents', async () => {
    const listener = await enrolledRouter(controller, call, unique('listener'), 'transit-routers');
    const edge = await enrolledRouter(controller, call, unique('edge-dialer'), 'edge-routers');
    const transit = await enrolledRouter(controller, call, unique('transit-dialer'), 'transit-routers');
    const end = await connected(listener.credentials, listener.id);

    for (const dialer of [edge, transit]) {
      // Any presented certificate may be the router's, not only the first.
      const presented = chainFingerprints(dialer.credentials);
      expect(presented).toContain(fingerprintOfCredentials(dialer.credentials));
      expect(await verify(end, dialer.id, presented)).toEqual({ success: true, text: 'router verified' });
    }
    end.socket.destroy();
  });

  it("refuses another router's certificate, an unknown id and a disabled router", async () => {
    const listener = await enrolledRouter(controller, call, unique('listener'), 'edge-routers');
    const dialer = await enrolledRouter(controller, call, unique('dialer'), 'edge-routers');
    const other = await enrolledRouter(controller, call, unique('other'), 'edge-routers');
    const end = await connected(listener.credentials, listener.id);

    const refused = (id: string) => ({ success: false, text: `could not verify router ${id}` });
    expect(await verify(end, dialer.id, [fingerprintOfCredentials(other.credentials)])).toEqual(refused(dialer.id));
    expect(await verify(end, dialer.id, [])).toEqual(refused(dialer.id));
    expect(await verify(end, 'no-such-router', [fingerprintOfCredentials(dialer.credentials)])).toEqual(
      refused('no-such-router'),
    );

    expect((await call('PATCH', `/edge-routers/${dialer.id}`, { disabled: true })).status).toBe(200);
    expect(await verify(end, dialer.id, [fingerprintOfCredentials(dialer.credentials)])).toEqual(refused(dialer.id));
    expect((await call('PATCH', `/edge-routers/${dialer.id}`, { disabled: false })).status).toBe(200);
    expect((await verify(end, dialer.id, [fingerprintOfCredentials(dialer.credentials)])).success).toBe(true);
    end.socket.destroy();
  });

  it("refuses a re-enrolled router's old certificate, and verifies its new one", async () => {
    const listener = await enrolledRouter(controller, call, unique('listener'), 'edge-routers');
    const dialer = await enrolledRouter(controller, call, unique('re-enrolled'), 'edge-routers');
    const end = await connected(listener.credentials, listener.id);
    const old = fingerprintOfCredentials(dialer.credentials);

    expect((await call('POST', `/edge-routers/${dialer.id}/re-enroll`)).status).toBe(200);
    expect((await verify(end, dialer.id, [old])).success, 'before it enrolls again').toBe(false);
    const renewed = await enrollRouter(controller, call, dialer.id, 'edge-routers');

    expect((await verify(end, dialer.id, [old])).success, 'its old certificate').toBe(false);
    expect((await verify(end, dialer.id, [fingerprintOfCredentials(renewed)])).success).toBe(true);
    end.socket.destroy();
  });
});
