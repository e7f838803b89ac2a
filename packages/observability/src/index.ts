export { createLogger, maskUrlPassword, redactPaths, type DestinationStream, type Logger, type LoggerOptions } from './logger';
export {
  createMetrics,
  MAIL_FAILURE_SERIES,
  QUEUE_STATES,
  type MailFailureReason,
  type Metrics,
  type MetricsOptions,
  type PipelineMetricsHooks,
  type QueueCountsSource,
} from './metrics';
