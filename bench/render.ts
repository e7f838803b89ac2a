// `npm run bench:render`: how fast the compiled MJML templates are filled, the point of compiling
// them once at start. It compiles both templates, then renders a one-event alert 20,000 times and
// a 20-event digest 2,000 times, and the digest to a rule's 10 members 200 times, rendered for each
// member and as the send stage renders it (the first alone, one shared render for the others; each
// after 500 warm-up rounds), and reports renders per second of
// CPU time (what this process itself spent, so it stays meaningful on a busy, shared machine) and
// of wall time. Figures go to bench/results/render.json (this run's only; BENCH_RESULTS=<file>
// elsewhere) and to stdout; there is no target.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { round } from './support/common';
import { createMailRenderer, makeContent, makeEvent, type MailContent } from './support/notify';
import { describeMachine } from './support/report';
import { resultsFile, revision, writeResults } from './support/results';

const RESULTS_FILE = resultsFile('render');

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
  // rendered for each member, against what the send stage does (composeMail): the first member's
  // rendered alone, one shared render (renderShared) filled for each of the others. Rates are
  // e-mails (one per member) per second.
  const members = Array.from({ length: 10 }, (_, i) => ({ name: `Member ${i}`, unsubscribeUrl: `https://notify.example.com/unsubscribe/token-${i}` }));
  const alone = (content: MailContent, member: (typeof members)[number]) =>
    renderer.render({ ...content, recipient: { email: 'm@example.com', name: member.name }, unsubscribeUrl: member.unsubscribeUrl });
  const perMember = measure(digest, 200, (content) => members.map((member) => alone(content, member)));
  const sharedRate = measure(digest, 200, (content) => {
    const shared = renderer.renderShared(content);
    return members.map((member, i) => (i === 0 ? alone(content, member) : shared.for(member)));
  });

  const output = {
    date: new Date().toISOString(),
    ...revision(),
    machine: describeMachine(loadBefore),
    compile_ms: round(compileMs, 1),
    alert_1_event: alertRate,
    digest_20_events: digestRate,
    digest_20_events_to_10_members: { rendered_for_each: perMember, first_alone_then_shared: sharedRate },
  };
  await writeResults(RESULTS_FILE, output);
  const line = (rate: Rate) => `${rate.per_cpu_second}/s CPU time (${rate.per_wall_second}/s wall)`;
  console.log(`mail: compiled both templates in ${compileMs.toFixed(0)} ms; 1-event alert ${line(alertRate)}; 20-event digest ${line(digestRate)}`);
  console.log(`20-event digest to 10 members, e-mails: rendered for each ${line(perMember)}; first alone, then one shared render filled for the others ${line(sharedRate)}`);
  console.log(`written to ${RESULTS_FILE}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error('bench:render failed:', error);
    process.exit(1);
  });
}
