import fc from 'fast-check';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { describe, expect, it } from 'vitest';
import { fastEscapeDots, markCrlfOnly, nodemailerEscapeDots } from './dot-stuffing';

/** What a DataStream with this `_transform` writes for these chunks, and its byte counts. */
async function streamed(transform: typeof fastEscapeDots, chunks: ReadonlyArray<Buffer | string>) {
  const stream = new DataStream() as DataStream & { inByteCount: number; outByteCount: number };
  Object.assign(stream, { _transform: transform });
  const out: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await ended;
  return { bytes: Buffer.concat(out).toString('latin1'), inBytes: stream.inByteCount, outBytes: stream.outByteCount };
}

// The bytes that matter (CR, LF, the dot) and two that do not, so runs of each come up often.
const byte = fc.constantFrom(0x0d, 0x0a, 0x2e, 0x61, 0x20);
const chunk = fc.array(byte, { maxLength: 40 }).map((bytes) => Buffer.from(bytes));

describe('fast dot-stuffing', () => {
  it('writes what nodemailer’s own DATA stream writes, byte for byte, however the message is cut into chunks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { maxLength: 8 }), fc.boolean(), async (chunks, asStrings) => {
        const input = asStrings ? chunks.map((c) => c.toString('latin1')) : chunks;
        expect(await streamed(fastEscapeDots, input)).toEqual(await streamed(nodemailerEscapeDots, input));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves a CRLF message without leading dots as it is and stuffs the dots that start lines', async () => {
    const message = 'Subject: x\r\n\r\n.hidden\r\nline\r\n..two\r\nbare\nend\r.dot';
    const { bytes } = await streamed(fastEscapeDots, [Buffer.from(message)]);
    expect(bytes).toBe('Subject: x\r\n\r\n..hidden\r\nline\r\n...two\r\nbare\r\nend\r\n..dot\r\n.\r\n');
    const plain = 'Subject: y\r\n\r\nno dots here\r\n';
    expect((await streamed(fastEscapeDots, [Buffer.from(plain)])).bytes).toBe(`${plain}.\r\n`);
  });

  it('stuffs a message marked CRLF-only as nodemailer does, after whatever chunks came before it', async () => {
    // Lines of anything but CR and LF (dots often, at their start too), joined by CRLFs.
    const line = fc.array(fc.constantFrom(0x2e, 0x61, 0x20), { maxLength: 6 }).map((bytes) => Buffer.from(bytes).toString('latin1'));
    const crlfOnly = fc.array(line, { minLength: 1, maxLength: 12 }).map((lines) => lines.join('\r\n'));
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { maxLength: 2 }), crlfOnly, async (before, message) => {
        const fast = await streamed(fastEscapeDots, [...before, markCrlfOnly(Buffer.from(message, 'latin1'))]);
        expect(fast).toEqual(await streamed(nodemailerEscapeDots, [...before, Buffer.from(message, 'latin1')]));
      }),
      { numRuns: 2000 },
    );
  });
});
