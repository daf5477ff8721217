export {
  Limiter,
  LimiterOptions,
  RunOptions,
  SignalledRunOptions,
  LimitedRequestInit,
  LimiterStats,
} from "./edgeshed.js";
export { OverloadedError, DeadlineError } from "./errors.js";
