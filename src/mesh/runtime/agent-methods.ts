import type { MeshCallContext } from './call-context.ts';
import { checkRequirement, type ConsentChecker } from './consent-requirement.ts';
import type { RpcMethod } from './jsonrpc.ts';
import type { MeshAgent } from './mesh-agent.ts';
import type { TaskManager } from './tasks/task-manager.ts';
import { taskMethods, type RuntimeCallContext } from './tasks/task-methods.ts';
import { a2aV1Methods } from './tasks/a2a-v1-methods.ts';

/**
 * The full method table of one agent: the task methods in the contract's and A2A 1.0's names (when
 * it has an executor) and its own methods, each wrapped so that a declared consent requirement is
 * checked before the handler runs.
 * A method name used twice is a programming error and throws at start.
 */
export function agentMethodTable(
  agent: MeshAgent,
  tasks: TaskManager | undefined,
  consent: ConsentChecker,
): Map<string, RpcMethod<RuntimeCallContext>> {
  const table = tasks ? new Map([...taskMethods(tasks), ...a2aV1Methods(tasks)]) : new Map<string, RpcMethod<RuntimeCallContext>>();
  for (const [name, method] of Object.entries(agent.methods ?? {})) {
    if (table.has(name)) throw new Error(`agent ${agent.info.alias}: method ${name} is already defined by the runtime`);
    table.set(name, {
      ...(method.params ? { params: method.params } : {}),
      handle: async (params: unknown, context: RuntimeCallContext) => {
        const call: MeshCallContext = {
          principal: context.principal,
          requestId: context.requestId,
          traceparent: context.traceparent,
          transport: context.transport,
          clock: context.clock,
        };
        if (method.consent) await checkRequirement(consent, method.consent, params as never, call);
        return method.handle(params as never, call);
      },
    });
  }
  return table;
}
