export {
  Limiter,
  LimiterOptions,
  LimiterPolicyOptions,
  QueueOptions,
  NoQueueOptions,
  BoundedQueueOptions,
  FixedLimiterOptions,
  AdaptiveLimiterOptions,
  AdaptiveOptions,
  AdaptiveAlgorithm,
  RunOptions,
  SignalledRunOptions,
  LimitedRequestInit,
  LimiterStats,
  Criticality,
  CallClass,
  ReserveOptions,
  QueueDiscipline,
  RateOptions,
  CriticalityStats,
} from "./edgeshed.js";
export { OverloadedError, DeadlineError, RateLimitedError } from "./errors.js";
export type { OverloadReason, RateLimitReason } from "./errors.js";
