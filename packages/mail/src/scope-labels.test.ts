import { SCOPES } from '@notify/core';
import { describe, expect, it } from 'vitest';
import { countedScope, scopeLabel } from './scope-labels';

describe('scopeLabel', () => {
  it('gives each of the 21 scopes its own readable label', () => {
    expect(SCOPES).toHaveLength(21);
    const labels = SCOPES.map(scopeLabel);
    expect(new Set(labels).size).toBe(21);
    for (const label of labels) {
      expect(label).toMatch(/^[A-Z][A-Za-z -]+$/);
      expect(label).not.toContain('_');
    }
  });

  it('reads the way the issue spells it', () => {
    expect(scopeLabel('new_open_port_detected')).toBe('New open port detected');
    expect(scopeLabel('new_email_breach_detected')).toBe('New e-mail breach detected');
  });

  it('counts in singular and plural', () => {
    expect(countedScope('new_open_port_detected', 1)).toBe('1 new open port detected');
    expect(countedScope('new_open_port_detected', 3)).toBe('3 new open ports detected');
    expect(countedScope('new_vulnerability_detected', 2)).toBe('2 new vulnerabilities detected');
    expect(countedScope('new_cybersecurity_news_added', 5)).toBe('5 new cybersecurity news items added');
  });

  it('still reads as words for a scope it does not know yet', () => {
    expect(scopeLabel('new_quantum_thing_detected' as never)).toBe('New quantum thing detected');
  });
});
