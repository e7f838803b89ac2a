import DataStream from 'nodemailer/lib/smtp-connection/data-stream';

/** A stream transform's `_transform`, as nodemailer's DataStream has it. */
type Transform = (this: DataStreamState, chunk: Buffer | string, encoding: BufferEncoding, done: (error?: Error | null) => void) => void;

/** What DataStream keeps between chunks (its constructor sets them), and the push of any Transform. */
interface DataStreamState {
  inByteCount: number;
  outByteCount: number;
  /** The last byte of the previous chunk, false before the first. */
  lastByte: number | false;
  push(chunk: Buffer): boolean;
}

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const INSERT_LF = Buffer.from('\n');
const INSERT_LF_DOT = Buffer.from('\n.');
const INSERT_CR = Buffer.from('\r');
const INSERT_DOT = Buffer.from('.');
const LINE_START_DOT = Buffer.from('\n.');

/**
 * Bytes known to have CRLF line breaks only (every CR followed by an LF, every LF preceded by a
 * CR): a MimeMessage's, as composeMessage writes them (markCrlfOnly).
 */
const crlfOnly = new WeakSet<Uint8Array>();

/**
 * Marks a composed message's bytes as CRLF lines only, which its DATA stream then only searches for
 * lines that start with a dot: one native search of the whole message instead of three a line, which
 * for a digest of hundreds of lines is a visible share of the event loop's CPU an e-mail (a CPU
 * profile of the digests part of `npm run bench:pipeline`). Only for bytes that are so: on others
 * the stream would leave a bare CR or LF as it is.
 */
export function markCrlfOnly(raw: Buffer): Buffer {
  crlfOnly.add(raw);
  return raw;
}

/**
 * CRLF-only bytes (markCrlfOnly) after a chunk that did not end in a CR, as escapeDots writes them:
 * the only insertion it can make is a dot before a dot that starts a line.
 */
function escapeDotsOfCrlfOnly(this: DataStreamState, chunk: Buffer, done: (error?: Error | null) => void): void {
  const length = chunk.length;
  this.inByteCount += length;
  const pieces: Buffer[] = [];
  let from = 0;
  if (chunk[0] === DOT && (this.lastByte === LF || this.lastByte === false)) pieces.push(INSERT_DOT);
  for (let at = chunk.indexOf(LINE_START_DOT); at >= 0; at = chunk.indexOf(LINE_START_DOT, at + 2)) {
    pieces.push(chunk.subarray(from, at + 1), INSERT_DOT);
    from = at + 1;
  }
  if (pieces.length) {
    pieces.push(chunk.subarray(from));
    const out = Buffer.concat(pieces);
    this.outByteCount += out.length;
    this.push(out);
  } else {
    this.outByteCount += length;
    this.push(chunk);
  }
  this.lastByte = chunk[length - 1]!;
  done();
}

/**
 * nodemailer's DATA stream (SMTPConnection pipes every message through it) with the same output,
 * byte for byte, found with native searches rather than a JavaScript loop over every byte: it turns
 * a bare CR or a bare LF into CRLF and doubles a dot that starts a line (RFC 5321 4.5.2, and a dot
 * after a bare CR, against SMTP smuggling). Its loop over every byte was a large share of our
 * process's CPU in waves and bursts of e-mails (CPU profiles), for messages that are CRLF already
 * (composeMessage) and rarely have a line starting with a dot. nodemailer as it is costs about half a
 * millisecond more an e-mail of a large digest (measured: see commit bdc1a9b, reverted for it), and
 * it offers no public way to hand its connection bytes stuffed already.
 *
 * An insertion can only happen at the chunk's first byte, the byte after a CR, an LF, or the byte
 * after an LF: those positions, in order, get exactly the test nodemailer makes at every byte.
 */
function escapeDots(this: DataStreamState, input: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
  if (!input || !input.length) {
    done();
    return;
  }
  if (typeof input !== 'string' && this.lastByte !== CR && crlfOnly.has(input)) {
    escapeDotsOfCrlfOnly.call(this, input, done);
    return;
  }
  const chunk = typeof input === 'string' ? Buffer.from(input) : input;
  const length = chunk.length;
  this.inByteCount += length;
  const pieces: Buffer[] = [];
  let outLength = 0;
  let from = 0;
  let checked = -1;
  const check = (i: number) => {
    if (i <= checked || i >= length) return;
    checked = i;
    const byte = chunk[i]!;
    const prev = i ? chunk[i - 1]! : this.lastByte;
    let insert: Buffer | undefined;
    if (prev === CR && byte !== LF) insert = byte === DOT ? INSERT_LF_DOT : INSERT_LF;
    else if (byte === LF && prev !== CR) insert = INSERT_CR;
    else if (byte === DOT && (prev === LF || prev === false)) insert = INSERT_DOT;
    if (!insert) return;
    if (i > from) {
      pieces.push(chunk.subarray(from, i));
      outLength += i - from;
    }
    pieces.push(insert);
    outLength += insert.length;
    from = i;
  };
  check(0);
  let cr = chunk.indexOf(CR);
  let lf = chunk.indexOf(LF);
  while (cr !== -1 || lf !== -1) {
    if (lf === -1 || (cr !== -1 && cr < lf)) {
      check(cr + 1);
      cr = chunk.indexOf(CR, cr + 1);
    } else {
      check(lf);
      check(lf + 1);
      lf = chunk.indexOf(LF, lf + 1);
    }
  }
  if (pieces.length) {
    if (from < length) {
      pieces.push(chunk.subarray(from));
      outLength += length - from;
    }
    this.outByteCount += outLength;
    this.push(Buffer.concat(pieces, outLength));
  } else {
    this.outByteCount += length;
    this.push(chunk);
  }
  this.lastByte = chunk[length - 1]!;
  done();
}

const prototype = DataStream.prototype as unknown as { _transform: Transform };

/** nodemailer's own, for the test that holds the two to the same output. */
export const nodemailerEscapeDots: Transform = prototype._transform;
export const fastEscapeDots: Transform = escapeDots;

/**
 * Installs escapeDots in nodemailer's DataStream, once per process (the transport does on load).
 * The test in dot-stuffing.test.ts compares it with the version of nodemailer installed, on random
 * input cut into random chunks: an upgrade that changes what the stream writes fails it.
 */
export function installFastDotStuffing(): void {
  prototype._transform = escapeDots;
}
