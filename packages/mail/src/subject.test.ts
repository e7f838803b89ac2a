import { FREQUENCIES, hasControlCharacter } from '@notify/core';
import { describe, expect, it } from 'vitest';
import { buildSubject, MAX_SUBJECT_LENGTH } from './subject';
import { makeContent, makeEvent } from './testing/fixtures';

describe('buildSubject', () => {
  it('names the organization, the count and the kind of a single instant event', () => {
    const subject = buildSubject(makeContent({ events: [makeEvent({ title: 'Port 3389 (RDP) open on mail.example.com' })] }));
    expect(subject).toBe('[Acme] 1 new open port detected: Port 3389 (RDP) open on mail.example.com');
  });

  it('counts a coalesced burst', () => {
    const subject = buildSubject(makeContent({ events: [makeEvent(), makeEvent(), makeEvent()] }));
    expect(subject).toBe('[Acme] 3 new open ports detected');
  });

  it('names the period of a digest, for every frequency', () => {
    const expected = {
      instant: '[Acme] Digest: 42 events — New open port detected',
      hourly: '[Acme] Hourly digest: 42 events — New open port detected',
      daily: '[Acme] Daily digest: 42 events — New open port detected',
      weekly: '[Acme] Weekly digest: 42 events — New open port detected',
      monthly: '[Acme] Monthly digest: 42 events — New open port detected',
    };
    const events = Array.from({ length: 42 }, () => makeEvent());
    for (const frequency of FREQUENCIES) {
      expect(buildSubject(makeContent({ kind: 'digest', frequency, events }))).toBe(expected[frequency]);
    }
    expect(buildSubject(makeContent({ kind: 'digest', frequency: 'daily', events: [makeEvent()] }))).toBe(
      '[Acme] Daily digest: 1 event — New open port detected',
    );
  });

  it('uses the scope of the rule in the wording', () => {
    const subject = buildSubject(makeContent({ scope: 'new_vulnerability_detected', events: [makeEvent(), makeEvent()] }));
    expect(subject).toBe('[Acme] 2 new vulnerabilities detected');
  });

  it('stays one line whatever the organization name or the title carry', () => {
    const subject = buildSubject(
      makeContent({
        organizationName: 'Acme\r\nBcc: victim@example.com',
        events: [makeEvent({ title: 'Open port\r\nX-Injected: yes\u0000\u2028\u202Eevil' })],
      }),
    );
    expect(hasControlCharacter(subject)).toBe(false);
    expect(subject).not.toMatch(/[\u2028\u202E]/);
    expect(subject).toBe('[Acme Bcc: victim@example.com] 1 new open port detected: Open port X-Injected: yes evil');
  });

  it('caps the length', () => {
    const subject = buildSubject(makeContent({ organizationName: 'A'.repeat(500), events: [makeEvent({ title: 'T'.repeat(5000) })] }));
    expect(subject.length).toBeLessThanOrEqual(MAX_SUBJECT_LENGTH);
    expect(subject.endsWith('…')).toBe(true);
  });
});
