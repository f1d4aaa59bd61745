/**
 * The cluster a runner process joins: `ClusterWorkflowEngine` on `@effect/cluster` sharding over
 * sockets on loopback, with the runners, shard locks and messages in one SQL store (SQLite file
 * or PostgreSQL). Every runner of a test builds exactly this; they differ only in their address.
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Layer, Option, Schema } from "effect"
import type { ConfigError } from "effect/ConfigError"

/** Where the cluster keeps its state (a runner reads it from its environment, as JSON). */
export const Store = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("sqlite"), filename: Schema.String }),
  Schema.Struct({
    kind: Schema.Literal("pg"),
    host: Schema.String,
    port: Schema.Number,
    database: Schema.String,
    username: Schema.String
  })
)
export type Store = typeof Store.Type

/** The SQL client of the store. */
export const sqlLayer = (store: Store): Layer.Layer<SqlClient, ConfigError | SqlError> =>
  store.kind === "sqlite"
    ? SqliteClient.layer({ filename: store.filename })
    : PgClient.layer({
      host: store.host,
      port: store.port,
      database: store.database,
      username: store.username,
      maxConnections: 8,
      applicationName: "phasebound-cluster-runner"
    })

/** How many shards the tests use: enough for two runners to both own some, few enough to lock fast. */
export const SHARDS_PER_GROUP = 32

/**
 * Short intervals so that a dead runner's shards move in seconds, not the defaults' minute:
 * a runner drops out of `getRunners` once its heartbeat (refreshed with its shard locks) is older
 * than `shardLockExpiration`, its SQL lock rows expire at the same age (PostgreSQL advisory locks
 * go with the dead process's connection at once), and the survivor reads unprocessed messages of
 * the shards it acquires on the next `entityMessagePollInterval`.
 */
export const shardingConfig = (port: number): Partial<ShardingConfig.ShardingConfig["Type"]> => ({
  runnerAddress: Option.some(RunnerAddress.make({ host: "127.0.0.1", port })),
  shardsPerGroup: SHARDS_PER_GROUP,
  shardLockRefreshInterval: "500 millis",
  shardLockExpiration: "2 seconds",
  refreshAssignmentsInterval: "250 millis",
  entityMessagePollInterval: "250 millis",
  entityReplyPollInterval: "100 millis",
  sendRetryInterval: "100 millis",
  runnerHealthCheckInterval: "1 second",
  entityTerminationTimeout: "2 seconds"
})

/** The workflow engine of a runner listening on 127.0.0.1:`port`, with sharding and storage. */
export const clusterLayer = (store: Store, port: number) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(NodeClusterSocket.layer({ storage: "sql", shardingConfig: shardingConfig(port) })),
    Layer.provide(sqlLayer(store))
  )
