// `npm run bench:render`: how fast the compiled MJML templates are filled, the point of compiling
// them once at start. It compiles both templates, then renders a one-event alert 20,000 times and
// a 20-event digest 2,000 times, and the digest to a rule's 10 members 200 times, rendered for each
// member and rendered once for all (each after 500 warm-up rounds), and reports renders per second of
// CPU time (what this process itself spent, so it stays meaningful on a busy, shared machine) and
// of wall time. Figures go to bench/results/render.json and to stdout; there is no target.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { root, round } from './support/common';
import { createMailRenderer, makeContent, makeEvent, type MailContent } from './support/notify';
import { describeMachine } from './support/report';

const RESULTS_FILE = join(root, 'bench', 'results', 'render.json');

interface Rate {
  renders: number;
  per_cpu_second: number;
  per_wall_second: number;
  /** Bytes of HTML and text of one render, so a template change that shrinks the mail shows. */
  bytes_per_render: number;
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const compileStart = performance.now();
  const renderer = await createMailRenderer();
  const compileMs = performance.now() - compileStart;

  const alert = makeContent({ events: [makeEvent({ summary: 'RDP exposed', url: 'https://app.example.com/f/1' })] });
  const digest = makeContent({
    kind: 'digest',
    frequency: 'daily',
    events: Array.from({ length: 20 }, (_, i) => makeEvent({ asset: `h${i % 4}.example.com`, severity: i % 3 ? 'high' : 'low' })),
  });

  /** `count` rounds of `renderAll` (default: one render of `content`); rates count the e-mails it returns. */
  const measure = (content: MailContent, count: number, renderAll = (c: MailContent) => [renderer.render(c)]): Rate => {
    for (let i = 0; i < 500; i += 1) renderAll(content);
    const cpuStart = process.cpuUsage();
    const wallStart = performance.now();
    let bytes = 0;
    let mails = 0;
    for (let i = 0; i < count; i += 1) {
      for (const mail of renderAll(content)) {
        bytes += mail.html.length + mail.text.length;
        mails += 1;
      }
    }
    const wallMs = performance.now() - wallStart;
    const cpu = process.cpuUsage(cpuStart);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    if (bytes === 0) throw new Error('the renderer produced empty mails');
    return {
      renders: mails,
      per_cpu_second: Math.round(mails / (cpuMs / 1000)),
      per_wall_second: Math.round(mails / (wallMs / 1000)),
      bytes_per_render: Math.round(bytes / mails),
    };
  };
  const alertRate = measure(alert, 20_000);
  const digestRate = measure(digest, 2_000);

  // The same digest to the 10 members of its rule, each with their own name and unsubscribe link:
  // rendered for each member, against rendered once (renderShared) and filled for each, as the
  // send stage does. Rates are e-mails (one per member) per second.
  const members = Array.from({ length: 10 }, (_, i) => ({ name: `Member ${i}`, unsubscribeUrl: `https://notify.example.com/unsubscribe/token-${i}` }));
  const perMember = measure(digest, 200, (content) => members.map((member) => renderer.render({ ...content, recipient: { email: 'm@example.com', name: member.name }, unsubscribeUrl: member.unsubscribeUrl })));
  const sharedRate = measure(digest, 200, (content) => {
    const shared = renderer.renderShared(content);
    return members.map((member) => shared.for(member));
  });

  const output = {
    date: new Date().toISOString(),
    machine: describeMachine(loadBefore),
    compile_ms: round(compileMs, 1),
    alert_1_event: alertRate,
    digest_20_events: digestRate,
    digest_20_events_to_10_members: { rendered_for_each: perMember, rendered_once_filled_for_each: sharedRate },
  };
  await mkdir(dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(output, null, 2)}\n`);
  const line = (rate: Rate) => `${rate.per_cpu_second}/s CPU time (${rate.per_wall_second}/s wall)`;
  console.log(`mail: compiled both templates in ${compileMs.toFixed(0)} ms; 1-event alert ${line(alertRate)}; 20-event digest ${line(digestRate)}`);
  console.log(`20-event digest to 10 members, e-mails: rendered for each ${line(perMember)}; rendered once, filled for each ${line(sharedRate)}`);
  console.log(`written to ${RESULTS_FILE}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error('bench:render failed:', error);
    process.exit(1);
  });
}
