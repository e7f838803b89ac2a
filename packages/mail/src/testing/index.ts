// @notify/mail/testing: what tests of mail need, for packages/ and test/ alike. Never in dist
// (tsconfig.build.json leaves testing/ out): smtp-server, mailparser and vitest are dev dependencies.
export { startSmtpServer, type ReceivedMail, type SmtpServerOptions, type TestSmtpServer, type Verdict } from './smtp-server';
export { expectNoSecret, FORBIDDEN, LEAKED } from './secrets';
