/**
 * The `ward-agent-tasks` plugin: an agent's tasks (when it executes any) decorated as `meshTasks`,
 * over its task store (default `<MESH_DATA_DIR>/agents/<alias>/tasks.sqlite`). Tasks the previous
 * process left running are marked failed at start; the tasks and then the store close with the app.
 */
import { join } from 'node:path';
import fastifyPlugin from 'fastify-plugin';
import type { Clock } from '../../core/clock.ts';
import { agentDid, type MeshConfig } from '../mesh-config.ts';
import { SqliteTaskStore } from '../storage/sqlite-task-store.ts';
import type { TaskStore } from '../storage/task-store.ts';
import { agentDataDir } from './agent-data-dir.ts';
import type { MeshAgent } from './mesh-agent.ts';
import { DEFAULT_INPUT_MODES } from './tasks/file-parts.ts';
import { TaskManager } from './tasks/task-manager.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The agent's tasks; undefined for an agent without an executor (only on an agent app). */
    meshTasks: TaskManager | undefined;
  }
}

export type AgentTasksOptions = {
  readonly agent: MeshAgent;
  readonly config: MeshConfig;
  readonly clock: Clock;
  /** Where tasks live; default the agent's SQLite file. */
  readonly store?: TaskStore | undefined;
};

/** The `ward-agent-tasks` plugin. */
export const agentTasks = fastifyPlugin<AgentTasksOptions>(
  async (app, options) => {
    const { agent, config } = options;
    const { alias } = agent.info;
    const executor = agent.executeTask;
    if (!executor) {
      app.decorate('meshTasks', undefined);
      return;
    }
    const store = options.store ?? new SqliteTaskStore(join(agentDataDir(config, alias), 'tasks.sqlite'));
    const tasks = new TaskManager({
      store,
      executor,
      clock: options.clock,
      agentDid: agentDid(config, alias),
      inputModes: agent.info.inputModes ?? DEFAULT_INPUT_MODES,
      onExecutorError: (error, taskId) => app.log.error({ err: error, task_id: taskId }, 'task executor failed'),
    });
    const interrupted = tasks.failInterrupted();
    if (interrupted > 0) app.log.warn({ interrupted }, 'tasks interrupted by the previous stop were marked failed');
    app.decorate('meshTasks', tasks);
    app.addHook('onClose', async () => {
      await tasks.close();
      store.close();
    });
  },
  { name: 'ward-agent-tasks', fastify: '5.x' },
);
