export {
  Limiter,
  LimiterOptions,
  LimiterPolicyOptions,
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
