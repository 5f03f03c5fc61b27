/** The limiter moved to shared/ so that the MCP host counts calls per connection with the same code. */
export { WindowLimiter } from '../shared/rate_limit.js';
