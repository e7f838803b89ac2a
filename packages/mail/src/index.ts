export type { MailContent, MailRenderer, RenderedMail } from './mail-content';
export { createMailRenderer } from './renderer';
export { scopeLabel } from './scope-labels';
export type { MailTransport, OutgoingMail, SendResult } from './outgoing-mail';
export { messageOptions } from './outgoing-mail';
export { createMailTransport } from './create-transport';
export type { MailTransportOptions } from './create-transport';
export { classifySendError, isServerUnavailable, PermanentMailError, recipientBounce, TransientMailError } from './send-errors';
export type { SendErrorKind } from './send-errors';
