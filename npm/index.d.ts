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
} from "./edgeshed.js";
export { OverloadedError, DeadlineError } from "./errors.js";
