export {
  Limiter,
  LimiterOptions,
  RunOptions,
  LimitedRequestInit,
  LimiterStats,
  OverloadedError,
  DeadlineError,
} from "./edgeshed.js";
