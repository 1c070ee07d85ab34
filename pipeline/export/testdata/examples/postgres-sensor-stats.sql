-- Flink SQL script of the etld pipeline postgres-sensor-stats (configs/examples/postgres-sensor-stats.yaml), written by etld export flink.
-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).
--
-- Placeholders: the file's ${VAR} references, kept as they are; substitute
-- them before running, e.g. envsubst < FILE > job.sql:
--   ${ETLD_PG_DSN_PASSWORD}: the Flink option password made from ${ETLD_PG_DSN} (sinks[0].dsn, sink stats); etld derives it from that value
--
-- Differences: 2, where Flink will not do what etld does:
--   sinks[0].create_table (sink stats, line 32): Flink's jdbc connector does not create the table: create it before the job starts, as etld would: CREATE TABLE IF NOT EXISTS "public"."sensor_stats" ( "id" text NOT NULL, "readings" bigint NOT NULL, "max_temp" double precision, PRIMARY KEY ("id") )
--   sinks[0].on_error (sink stats, line 33): Flink fails the job on a row the target refuses for good; etld skips it and writes it to out/sensor-stats-rejected.jsonl

SET 'execution.runtime-mode' = 'streaming';
SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1024';

CREATE TABLE `sensor` (
  `id` STRING,
  `ts` BIGINT,
  `temperature` DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'configs/examples/data/sensor.csv',
  'format' = 'csv'
);

CREATE TEMPORARY VIEW `per_sensor` AS
SELECT id, COUNT(*) AS readings, MAX(temperature) AS max_temp FROM sensor GROUP BY id;

CREATE TABLE `stats` (
  `id` STRING,
  `readings` BIGINT,
  `max_temp` DOUBLE,
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://127.0.0.1:5432/metrics',
  'table-name' = 'sensor_stats',
  'username' = 'etld',
  'password' = '${ETLD_PG_DSN_PASSWORD}'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `stats` SELECT * FROM `per_sensor`;
END;
