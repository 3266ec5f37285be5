import type { Clock } from '../../core/clock.ts';
import type { MeshPrincipal } from './auth.ts';

/**
 * What agent code knows about one call (house style: a typed call context, never the request):
 * the authenticated caller, the request id, the W3C trace context to pass on, and the clock.
 */
export type MeshCallContext = {
  readonly principal: MeshPrincipal;
  readonly requestId: string;
  /** The `traceparent` of this call (W3C Trace Context); pass it on when calling another agent. */
  readonly traceparent: string;
  readonly transport: 'http' | 'websocket';
  readonly clock: Clock;
};
