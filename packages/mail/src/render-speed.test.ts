import { describe, expect, it } from 'vitest';
import type { MailContent } from './mail-content';
import { createMailRenderer } from './renderer';
import { makeContent, makeEvent } from './testing/fixtures';

// Bench-like, deliberately not a timing assertion (machines and their load vary): it prints the
// fill rate of the compiled templates, the point of compiling MJML once at start. The CPU-time
// rate is what the process itself spent, so it stays meaningful on a busy machine.
describe('render speed', () => {
  it('fills compiled templates fast (rates printed, not asserted)', async () => {
    const compileStart = performance.now();
    const renderer = await createMailRenderer();
    const compileMs = performance.now() - compileStart;

    const alert = makeContent({ events: [makeEvent({ summary: 'RDP exposed', url: 'https://app.example.com/f/1' })] });
    const digest = makeContent({
      kind: 'digest',
      frequency: 'daily',
      events: Array.from({ length: 20 }, (_, i) => makeEvent({ asset: `h${i % 4}.example.com`, severity: i % 3 ? 'high' : 'low' })),
    });

    const measure = (content: MailContent, count: number): string => {
      for (let i = 0; i < 500; i += 1) renderer.render(content);
      const cpuStart = process.cpuUsage();
      const wallStart = performance.now();
      let bytes = 0;
      for (let i = 0; i < count; i += 1) {
        const mail = renderer.render(content);
        bytes += mail.html.length + mail.text.length;
      }
      const wallMs = performance.now() - wallStart;
      const cpu = process.cpuUsage(cpuStart);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      expect(bytes).toBeGreaterThan(0);
      return `${Math.round(count / (cpuMs / 1000))}/s CPU time (${Math.round(count / (wallMs / 1000))}/s wall)`;
    };
    const alertRate = measure(alert, 20_000);
    const digestRate = measure(digest, 2_000);
    console.log(`mail: compiled both templates in ${compileMs.toFixed(0)} ms; 1-event alert ${alertRate}; 20-event digest ${digestRate}`);
  });
});
