import { describe, expect, it } from 'vitest';
import { classifySendError, isServerUnavailable, PermanentMailError, recipientBounce, toMailError, TransientMailError } from './send-errors';

const smtp = (responseCode: number, code = 'EENVELOPE') => Object.assign(new Error(`${responseCode}`), { responseCode, code });
const net = (code: string) => Object.assign(new Error(code), { code });

describe('classifySendError', () => {
  it.each([421, 450, 451, 452, 499])('SMTP %i is transient', (code) => {
    expect(classifySendError(smtp(code))).toBe('transient');
    expect(classifySendError(smtp(code, 'EMESSAGE'))).toBe('transient');
  });

  it.each([500, 550, 552, 553, 554, 599])('SMTP %i is permanent', (code) => {
    expect(classifySendError(smtp(code))).toBe('permanent');
    expect(classifySendError(smtp(code, 'EMESSAGE'))).toBe('permanent');
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ESOCKET', 'ECONNECTION', 'EDNS', 'ENOTFOUND', 'EAI_AGAIN', 'ETLS'])(
    'connection error %s is transient',
    (code) => expect(classifySendError(net(code))).toBe('transient'),
  );

  it('reads the original code nodemailer keeps under a generic one', () => {
    expect(classifySendError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET', originalCode: 'ECONNREFUSED' }))).toBe('transient');
    expect(classifySendError(Object.assign(new Error('Greeting never received'), { code: 'ETIMEDOUT', timeoutType: 'GREETING_TIMEOUT' }))).toBe('transient');
  });

  it('treats a refused envelope or message without a 4xx code as permanent', () => {
    expect(classifySendError(net('EENVELOPE'))).toBe('permanent');
    expect(classifySendError(net('EMESSAGE'))).toBe('permanent');
  });

  it('retries authentication failures: they are the server configuration, not this message', () => {
    expect(classifySendError(Object.assign(new Error('535 Invalid login'), { code: 'EAUTH', responseCode: 535 }))).toBe('transient');
  });

  it('keeps the verdict of an already classified error and retries unknown ones', () => {
    expect(classifySendError(new PermanentMailError('x'))).toBe('permanent');
    expect(classifySendError(new TransientMailError('x'))).toBe('transient');
    expect(classifySendError(new Error('something odd'))).toBe('transient');
    expect(classifySendError('a string')).toBe('transient');
    expect(classifySendError(null)).toBe('transient');
  });
});

describe('toMailError', () => {
  it('wraps the cause in the class its classification calls for', () => {
    const cause = smtp(550);
    const wrapped = toMailError(cause);
    expect(wrapped).toBeInstanceOf(PermanentMailError);
    expect(wrapped.cause).toBe(cause);
    expect(toMailError(net('ECONNRESET'))).toBeInstanceOf(TransientMailError);
  });
});

describe('isServerUnavailable', () => {
  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ESOCKET', 'ECONNECTION', 'ENOTFOUND', 'EAUTH'])('connection error %s says the server is unavailable', (code) => {
    expect(isServerUnavailable(net(code))).toBe(true);
    expect(isServerUnavailable(toMailError(net(code)))).toBe(true);
  });

  it('reads 421 (service not available) as an outage, other answers as verdicts on the message', () => {
    expect(isServerUnavailable(smtp(421))).toBe(true);
    for (const code of [450, 451, 452, 550, 554]) expect(isServerUnavailable(toMailError(smtp(code)))).toBe(false);
  });

  it('follows nodemailer\'s original code and wrapped causes', () => {
    expect(isServerUnavailable(Object.assign(new Error('x'), { code: 'EPROTOCOL', originalCode: 'ECONNREFUSED' }))).toBe(true);
    expect(isServerUnavailable(new TransientMailError('x', { cause: net('ECONNREFUSED') }))).toBe(true);
    expect(isServerUnavailable(new Error('something odd'))).toBe(false);
    expect(isServerUnavailable(null)).toBe(false);
  });
});

describe('recipientBounce', () => {
  const refused = (responseCode: number, response: string, command = 'RCPT TO') =>
    Object.assign(new Error(response), { code: 'EENVELOPE', responseCode, response, command });

  it.each([
    [550, '550 5.1.1 <a@b.example>: Recipient address rejected: User unknown'],
    [551, '551 User not local'],
    [553, '553 mailbox name not allowed'],
    [554, '554 5.1.2 bad destination system address'],
  ])('a %i at RCPT TO is a bounce, with the reply kept', (code, reply) => {
    expect(recipientBounce(refused(code, reply))).toBe(reply);
    // Wrapped as the sender wraps it, too.
    expect(recipientBounce(toMailError(refused(code, reply)))).toBe(reply);
  });

  it('is not a bounce when temporary, refused at DATA or MAIL FROM, a policy refusal, or not SMTP at all', () => {
    expect(recipientBounce(refused(450, '450 4.2.1 mailbox busy'))).toBeNull();
    expect(recipientBounce(refused(550, '550 5.1.1 no such user', 'DATA'))).toBeNull();
    expect(recipientBounce(refused(553, '553 sender rejected', 'MAIL FROM'))).toBeNull();
    expect(recipientBounce(refused(554, '554 5.7.1 relay access denied'))).toBeNull();
    expect(recipientBounce(net('ECONNREFUSED'))).toBeNull();
    expect(recipientBounce('550')).toBeNull();
  });

  it('keeps at most 300 characters of a long reply, read in bounded time', () => {
    const reply = `550 5.1.1 ${'x'.repeat(100_000)}`;
    expect(recipientBounce(refused(550, reply))).toHaveLength(300);
    expect(recipientBounce(refused(554, `554 ${' 5.1'.repeat(50_000)}`))).toBeNull();
  });
});
